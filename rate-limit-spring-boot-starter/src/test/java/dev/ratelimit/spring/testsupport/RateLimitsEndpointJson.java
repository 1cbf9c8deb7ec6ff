package dev.ratelimit.spring.testsupport;

import java.util.List;
import java.util.function.UnaryOperator;

import com.jayway.jsonpath.DocumentContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the {@code ratelimits} endpoint answers in the actuator tests' configuration,
 * checked alike over either web stack: a policy {@code geocode-burst} (a token bucket of
 * 10, refilled 5 a second, per API key) on {@code GET /api/geocode}, and a policy
 * {@code counted} (100 an hour for the {@code paid} tier) on {@code /api/counted}, with
 * {@code on-backend-failure: deny}.
 */
public final class RateLimitsEndpointJson {

	private RateLimitsEndpointJson() {
	}

	/**
	 * Checks the overview: the backend, its failure mode, the policies and the first two
	 * filter rules.
	 * @param json the answer to {@code GET /actuator/ratelimits}
	 */
	public static void assertOverview(DocumentContext json) {
		assertThat(json.read("$.backend", String.class)).isEqualTo("memory");
		assertThat(json.read("$.failureMode", String.class)).isEqualTo("deny");
		assertThat(json.read("$.defaultTier", String.class)).isEqualTo("free");
		assertThat(json.read("$.policies.geocode-burst.key", String.class)).isEqualTo("api-key");
		assertThat(json.read("$.policies.geocode-burst.limits[0].algorithm", String.class)).isEqualTo("token-bucket");
		assertThat(json.read("$.policies.geocode-burst.limits[0].rate", String.class)).isEqualTo("5/1s");
		assertThat(json.read("$.policies.geocode-burst.limits[0].limit", Long.class)).isEqualTo(10);
		assertThat(json.read("$.policies.counted.tiers.paid[0].limit", Long.class)).isEqualTo(100);
		assertThat(json.read("$.filters[0].patterns", List.class)).containsExactly("/api/geocode");
		assertThat(json.read("$.filters[0].methods", List.class)).containsExactly("GET");
		assertThat(json.read("$.filters[0].policies", List.class)).containsExactly("geocode-burst");
		assertThat(json.read("$.filters[1].policies", List.class)).containsExactly("counted");
	}

	/**
	 * Checks that a client's state in {@code geocode-burst}, after three calls, is what
	 * the last call's headers said: 7 of 10 left.
	 * @param json the answer to {@code GET /actuator/ratelimits/geocode-burst/{key}}
	 * @param lastHeader the value of a header of the client's last call, by name
	 */
	public static void assertStateAsTheHeadersSaid(DocumentContext json, UnaryOperator<String> lastHeader) {
		assertThat(json.read("$.policy", String.class)).isEqualTo("geocode-burst");
		assertThat(json.read("$.tier", String.class)).isEqualTo("free");
		assertThat(json.read("$.limits[0].algorithm", String.class)).isEqualTo("token-bucket");
		assertThat(json.read("$.limits[0].limit", String.class)).isEqualTo(lastHeader.apply("X-RateLimit-Limit"))
			.isEqualTo("10");
		assertThat(json.read("$.limits[0].remaining", String.class))
			.isEqualTo(lastHeader.apply("X-RateLimit-Remaining"))
			.isEqualTo("7");
		assertThat(json.read("$.limits[0].resetSeconds", String.class))
			.isEqualTo(lastHeader.apply("X-RateLimit-Reset"));
	}

}
