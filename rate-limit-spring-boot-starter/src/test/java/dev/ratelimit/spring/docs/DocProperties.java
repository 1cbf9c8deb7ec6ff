package dev.ratelimit.spring.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.origin.OriginTrackedValue;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.test.context.DynamicPropertyRegistry;

import dev.ratelimit.core.docs.DocExamples;

/**
 * A YAML example of the docs as a property source, loaded by Spring Boot's own YAML
 * loader as an {@code application.yml} would be.
 */
final class DocProperties {

	private DocProperties() {
	}

	/**
	 * Loads a YAML example.
	 * @param file the markdown file, relative to the project's root
	 * @param example the example's name in its marker
	 * @return its properties
	 */
	static EnumerablePropertySource<?> of(String file, String example) {
		String yaml = DocExamples.block(file, example);
		try {
			List<PropertySource<?>> documents = new YamlPropertySourceLoader().load(file + " (" + example + ")",
					new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
			if (documents.size() != 1) {
				throw new IllegalStateException(file + ": the example '" + example + "' holds " + documents.size()
						+ " YAML documents, not one");
			}
			return (EnumerablePropertySource<?>) documents.get(0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Adds the properties of a YAML example to a test's environment.
	 * @param registry the test's registry of dynamic properties
	 * @param file the markdown file, relative to the project's root
	 * @param example the example's name in its marker
	 */
	static void register(DynamicPropertyRegistry registry, String file, String example) {
		EnumerablePropertySource<?> properties = of(file, example);
		for (String name : properties.getPropertyNames()) {
			Object value = properties.getProperty(name);
			Object plain = (value instanceof OriginTrackedValue tracked) ? tracked.getValue() : value;
			registry.add(name, () -> plain);
		}
	}

}
