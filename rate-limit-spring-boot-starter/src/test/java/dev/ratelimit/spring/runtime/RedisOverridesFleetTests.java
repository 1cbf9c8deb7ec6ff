package dev.ratelimit.spring.runtime;

import java.net.http.HttpResponse;
import java.time.Duration;
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
import static org.awaitility.Awaitility.await;

/**
 * Overrides on the Redis backend, set over HTTP on one instance of a fleet of two
 * applications sharing a real {@code redis-server}: every instance applies the change
 * within a second, and an instance started later (a restart) finds it at once.
 */
class RedisOverridesFleetTests {

	@Test
	void anOverrideSetOnOneInstanceAppliesOnTheOtherWithinASecondAndSurvivesARestart() throws Exception {
		try (RedisServer server = RedisServer.start()) {
			String[] settings = settings(server.endpoint(), TestRedis.uniquePrefix());
			ConfigurableApplicationContext first = start(settings);
			ConfigurableApplicationContext second = start(settings);
			try {
				Http one = new Http(port(first));
				Http two = new Http(port(second));
				assertThat(quota(two.api("fleet-customer"))).isEqualTo(5);

				assertThat(one
					.operator("POST", "/actuator/ratelimitoverrides/api/fleet-customer",
							"{\"limits\":[{\"rate\":\"50/1h\"}]}")
					.statusCode()).isEqualTo(204);
				await().atMost(Duration.ofSeconds(1))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> quota(two.api("fleet-customer")) == 50);

				second.close();
				ConfigurableApplicationContext restarted = start(settings);
				try {
					Http three = new Http(port(restarted));
					assertThat(quota(three.api("fleet-customer"))).isEqualTo(50);
					assertThat(three.get("/actuator/ratelimitoverrides/api/fleet-customer").statusCode())
						.isEqualTo(200);

					assertThat(three.operator("DELETE", "/actuator/ratelimitoverrides/api/fleet-customer", null)
						.statusCode()).isEqualTo(204);
					await().atMost(Duration.ofSeconds(1))
						.pollInterval(Duration.ofMillis(20))
						.until(() -> quota(one.api("fleet-customer")) == 5);
				}
				finally {
					restarted.close();
				}
			}
			finally {
				first.close();
				second.close();
			}
		}
	}

	@Test
	void whileRedisIsDownAChangeIsRefusedWith503AndTheLastCopyKeepsApplying() throws Exception {
		try (RedisServer server = RedisServer.start()) {
			List<String> settings = new ArrayList<>(List.of(settings(server.endpoint(), TestRedis.uniquePrefix())));
			settings.add("--ratelimit.on-backend-failure=local");
			try (ConfigurableApplicationContext context = start(settings.toArray(String[]::new))) {
				Http http = new Http(port(context));
				assertThat(http
					.operator("POST", "/actuator/ratelimitoverrides/api/steady-customer",
							"{\"limits\":[{\"rate\":\"50/1h\"}]}")
					.statusCode()).isEqualTo(204);

				server.stop();
				HttpResponse<String> refused = http.operator("POST", "/actuator/ratelimitoverrides/api/other-customer",
						"{\"limits\":[{\"rate\":\"50/1h\"}]}");
				assertThat(refused.statusCode()).isEqualTo(503);
				assertThat(refused.body()).contains("The overrides could not be changed");
				// decided by this instance's own limits meanwhile, which take the
				// override too
				assertThat(quota(http.api("steady-customer"))).isEqualTo(50);
				assertThat(quota(http.api("other-customer"))).isEqualTo(5);

				// back, empty: the refused change never arrives later
				server.restart();
				await().atMost(Duration.ofSeconds(10))
					.pollInterval(Duration.ofMillis(100))
					.until(() -> http
						.operator("POST", "/actuator/ratelimitoverrides/api/later-customer",
								"{\"limits\":[{\"rate\":\"70/1h\"}]}")
						.statusCode() == 204);
				// clients are listed hashed: the one override is the later customer's
				// 70/1h
				assertThat(com.jayway.jsonpath.JsonPath.parse(http.get("/actuator/ratelimitoverrides").body())
					.read("$.overrides[*].limits[0].rate", List.class)).containsExactly("70/1h");
				assertThat(quota(http.api("other-customer"))).isEqualTo(5);
			}
		}
	}

	private static ConfigurableApplicationContext start(String[] settings) {
		return new SpringApplicationBuilder(RuntimeTestApplication.class).run(settings);
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	private static long quota(HttpResponse<String> response) {
		String policy = response.headers().firstValue("RateLimit-Policy").orElseThrow();
		int q = policy.indexOf(";q=");
		return Long.parseLong(policy.substring(q + 3, policy.indexOf(';', q + 3)));
	}

	private static String[] settings(RedisEndpoint endpoint, String prefix) {
		List<String> settings = new ArrayList<>(List.of("--server.port=0", "--ratelimit.backend=redis",
				"--ratelimit.redis.key-prefix=" + prefix, "--ratelimit.redis.timeout=2s",
				"--ratelimit.policies.api.key=api-key", "--ratelimit.policies.api.tiers.free[0].rate=5/1h",
				"--ratelimit.filters[0].patterns=/api/**", "--ratelimit.filters[0].policies=api",
				"--management.endpoints.web.exposure.include=ratelimitoverrides",
				"--spring.data.redis.host=" + endpoint.host(), "--spring.data.redis.port=" + endpoint.port(),
				"--spring.data.redis.database=" + endpoint.database()));
		if (endpoint.password() != null) {
			settings.add("--spring.data.redis.password=" + endpoint.password());
		}
		return settings.toArray(String[]::new);
	}

}
