package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.redis.reservoir} sizes two-tier mode; {@code ratelimit.redis.lease},
 * its former name, still works and is listed as deprecated in the configuration metadata.
 */
class ReservoirPropertyTests {

	@Test
	void isOffByDefault() {
		assertThat(PolicyRegistryFactory.reservoir(bind(Map.of()))).isZero();
	}

	@Test
	void takesTheReservoirProperty() {
		assertThat(PolicyRegistryFactory.reservoir(bind(Map.of("ratelimit.redis.reservoir", "20")))).isEqualTo(20);
	}

	@Test
	void takesTheDeprecatedLeasePropertyAlone() {
		assertThat(PolicyRegistryFactory.reservoir(bind(Map.of("ratelimit.redis.lease", "20")))).isEqualTo(20);
	}

	@Test
	void takesTheSameValueUnderBothNames() {
		RateLimitProperties.Redis redis = bind(
				Map.of("ratelimit.redis.reservoir", "20", "ratelimit.redis.lease", "20"));
		assertThat(PolicyRegistryFactory.reservoir(redis)).isEqualTo(20);
	}

	@Test
	void theMetadataListsLeaseAsDeprecatedInFavourOfReservoir() throws IOException {
		String metadata = generatedMetadata();
		List<Map<String, Object>> lease = JsonPath.read(metadata,
				"$.properties[?(@.name == 'ratelimit.redis.lease')].deprecation");
		assertThat(lease).singleElement()
			.satisfies(
					(deprecation) -> assertThat(deprecation).containsEntry("replacement", "ratelimit.redis.reservoir")
						.containsKey("reason"));
		List<Object> reservoirDefault = JsonPath.read(metadata,
				"$.properties[?(@.name == 'ratelimit.redis.reservoir')].defaultValue");
		assertThat(reservoirDefault).containsExactly(0);
	}

	private static RateLimitProperties.Redis bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bind("ratelimit", RateLimitProperties.class)
			.orElseGet(RateLimitProperties::new)
			.getRedis();
	}

	/** The metadata the configuration processor wrote for the starter's properties. */
	private static String generatedMetadata() throws IOException {
		for (URL url : Collections.list(ReservoirPropertyTests.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"))) {
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
