package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
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
		String metadata = StarterMetadata.generated();
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

}
