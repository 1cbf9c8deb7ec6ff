package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;

/**
 * The configuration metadata the starter's build wrote, for tests that check what IDEs
 * are told about its properties.
 */
final class StarterMetadata {

	private StarterMetadata() {
	}

	/**
	 * Returns the metadata the configuration processor wrote for the starter's
	 * properties, merged with its additional metadata.
	 * @return the JSON text
	 * @throws IOException if it cannot be read
	 */
	static String generated() throws IOException {
		for (URL url : Collections
			.list(StarterMetadata.class.getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				String metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
				if (metadata.contains(RateLimitProperties.class.getName())) {
					return metadata;
				}
			}
		}
		throw new AssertionError("No configuration metadata for " + RateLimitProperties.class.getName());
	}

}
