package dev.ratelimit.sample.geocoding.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Enumeration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.io.DefaultResourceLoader;

import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.sample.geocoding.GeocodingApplication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The start-up failures that docs/CONFIGURATION.md shows, read from the doc: the sample
 * with its {@code application.yml} edited as the doc says fails to start, and prints the
 * doc's text.
 */
@ExtendWith(OutputCaptureExtension.class)
class ConfigurationFailureDocsTests {

	private static final String CONFIGURATION = "docs/CONFIGURATION.md";

	private static final Path APPLICATION_YML = Path.of("src/main/resources/application.yml");

	@TempDir
	private Path edited;

	@Test
	void aZeroRateAndAZeroCapacityAreReportedTogether(CapturedOutput output) {
		startWith("- rate: 60/1m", "- rate: 0/1m", "capacity: 10", "capacity: 0");
		assertThat(output).contains(DocExamples.block(CONFIGURATION, "invalid-values"));
	}

	@Test
	void aFilterNamingAnUnknownPolicyIsReportedWithThePoliciesThatExist(CapturedOutput output) {
		startWith("policies: [api, backend-capacity]", "policies: [api, backend-capacty]");
		assertThat(output).contains(DocExamples.block(CONFIGURATION, "unknown-policy"));
	}

	@Test
	void aMisspeltAlgorithmIsReportedByBootsBinderWithTheValuesItTakes(CapturedOutput output) {
		startWith("algorithm: token-bucket", "algorithm: token-bukket");
		assertThat(output).contains(DocExamples.block(CONFIGURATION, "unknown-algorithm"));
	}

	/**
	 * Starts the sample with its application.yml edited (each text replaced by the next,
	 * each found once), served as the class path's {@code application.yml}, so that Boot
	 * reports it with its origin as it would the real one; asserts that start-up fails.
	 */
	private void startWith(String... replacements) {
		try {
			String yaml = Files.readString(APPLICATION_YML);
			for (int i = 0; i < replacements.length; i += 2) {
				assertThat(yaml.indexOf(replacements[i])).as(replacements[i])
					.isNotNegative()
					.isEqualTo(yaml.lastIndexOf(replacements[i]));
				yaml = yaml.replace(replacements[i], replacements[i + 1]);
			}
			Path file = Files.writeString(this.edited.resolve("application.yml"), yaml);
			ClassLoader classPath = new EditedApplicationYml(file, getClass().getClassLoader());
			assertThatException().isThrownBy(() -> new SpringApplicationBuilder(GeocodingApplication.class)
				.resourceLoader(new DefaultResourceLoader(classPath))
				.run("--server.port=0"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The class path, but for an {@code application.yml} of the test's.
	 */
	private static final class EditedApplicationYml extends ClassLoader {

		private final URL applicationYml;

		EditedApplicationYml(Path applicationYml, ClassLoader parent) throws MalformedURLException {
			super(parent);
			this.applicationYml = applicationYml.toUri().toURL();
		}

		@Override
		public URL getResource(String name) {
			return "application.yml".equals(name) ? this.applicationYml : super.getResource(name);
		}

		@Override
		public Enumeration<URL> getResources(String name) throws IOException {
			return "application.yml".equals(name) ? Collections.enumeration(java.util.List.of(this.applicationYml))
					: super.getResources(name);
		}

	}

}
