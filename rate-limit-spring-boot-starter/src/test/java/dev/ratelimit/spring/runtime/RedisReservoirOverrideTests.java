package dev.ratelimit.spring.runtime;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two-tier mode against overrides: the permits an instance holds in its reservoir were
 * taken under the limit of their time, and are never spent under an override set since.
 */
class RedisReservoirOverrideTests {

	@Test
	void anOverrideAppliesAtOnceThoughTheReservoirStillHoldsPermits() throws Exception {
		try (RedisServer server = RedisServer.start();
				ConfigurableApplicationContext context = start(server.endpoint(), TestRedis.uniquePrefix())) {
			Http http = new Http(((WebServerApplicationContext) context).getWebServer().getPort());
			// the first request fills the reservoir with 10 of the 20 permits: 10 left in
			// Redis, 9 held here
			HttpResponse<String> first = http.api("reservoir-customer");
			assertThat(first.statusCode()).isEqualTo(200);
			assertThat(first.headers().firstValue("RateLimit"))
				.hasValueSatisfying((limit) -> assertThat(limit).startsWith("\"api\";r=19;"));

			assertThat(http
				.operator("POST", "/actuator/ratelimitoverrides/api/reservoir-customer",
						"{\"limits\":[{\"rate\":\"3/1h\"}]}")
				.statusCode()).isEqualTo(204);

			// 10 of 20 taken become 10 of 3: none left. Had the 9 held here been spent
			// under the override, these would be allowed.
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				HttpResponse<String> response = http.api("reservoir-customer");
				assertThat(response.headers().firstValue("RateLimit-Policy"))
					.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=3;"));
				statuses.add(response.statusCode());
			}
			assertThat(statuses).containsOnly(429);

			// removed: the bucket of 20 again, Redis's state converted back (spent stays
			// spent); the reservoir fills under it
			assertThat(
					http.operator("DELETE", "/actuator/ratelimitoverrides/api/reservoir-customer", null).statusCode())
				.isEqualTo(204);
			HttpResponse<String> back = http.api("reservoir-customer");
			assertThat(back.headers().firstValue("RateLimit-Policy"))
				.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=20;"));
			assertThat(back.statusCode()).isEqualTo(200);
		}
	}

	private static ConfigurableApplicationContext start(RedisEndpoint endpoint, String prefix) {
		List<String> settings = new ArrayList<>(List.of("--server.port=0", "--ratelimit.backend=redis",
				"--ratelimit.redis.key-prefix=" + prefix, "--ratelimit.redis.timeout=2s",
				"--ratelimit.redis.reservoir=10", "--ratelimit.policies.api.key=api-key",
				"--ratelimit.policies.api.tiers.free[0].rate=20/1h", "--ratelimit.filters[0].patterns=/api/**",
				"--ratelimit.filters[0].policies=api", "--management.endpoints.web.exposure.include=ratelimitoverrides",
				"--spring.data.redis.host=" + endpoint.host(), "--spring.data.redis.port=" + endpoint.port(),
				"--spring.data.redis.database=" + endpoint.database()));
		if (endpoint.password() != null) {
			settings.add("--spring.data.redis.password=" + endpoint.password());
		}
		return new SpringApplicationBuilder(RuntimeTestApplication.class).run(settings.toArray(String[]::new));
	}

}
