package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fuzz scenario finds the {@code *Fuzz*} test classes of core and the starter, and
 * reads surefire's counts.
 */
class FuzzScenarioTest {

	@TempDir
	Path root;

	@Test
	void findsTheFuzzTestClassesOfCoreAndTheStarterOnly() throws IOException {
		write("rate-limit-core/src/test/java/dev/ratelimit/core/AlgorithmFuzzTest.java");
		write("rate-limit-spring-boot-starter/src/test/java/dev/ratelimit/spring/KeyFuzzTests.java");
		write("rate-limit-core/src/test/java/dev/ratelimit/core/RateTest.java");
		write("sample-geocoding-app/src/test/java/dev/ratelimit/sample/SampleFuzzTest.java");
		assertThat(Fuzz.fuzzClasses(this.root)).extracting((path) -> path.getFileName().toString())
			.containsExactly("AlgorithmFuzzTest.java", "KeyFuzzTests.java");
		assertThat(Fuzz.fuzzClasses(this.root.resolve("nothing-here"))).isEmpty();
	}

	@Test
	void readsTheCountsOfASurefireReport() {
		String suite = "<testsuite xmlns:xsi=\"x\" name=\"dev.ratelimit.core.AlgorithmFuzzTest\" time=\"1.2\" "
				+ "tests=\"12\" errors=\"1\" skipped=\"2\" failures=\"3\" flakes=\"0\">";
		assertThat(Fuzz.attribute(suite, "tests")).isEqualTo(12);
		assertThat(Fuzz.attribute(suite, "failures")).isEqualTo(3);
		assertThat(Fuzz.attribute(suite, "errors")).isEqualTo(1);
		assertThat(Fuzz.attribute(suite, "absent")).isZero();
	}

	private void write(String path) throws IOException {
		Path file = this.root.resolve(path);
		Files.createDirectories(file.getParent());
		Files.writeString(file, "class X {}");
	}

}
