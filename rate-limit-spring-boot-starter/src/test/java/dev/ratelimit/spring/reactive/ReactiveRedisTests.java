package dev.ratelimit.spring.reactive;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive application on the Redis backend, against a real {@code redis-server}, on
 * Netty with BlockHound: Redis decisions never block an event loop, two applications
 * share one quota, and a Redis that is gone gives 503 in {@code deny} mode.
 */
class ReactiveRedisTests {

	@BeforeAll
	static void blockHound() {
		BlockHoundInstalled.check();
	}

	@Test
	void twoReactiveApplicationsOnOneRedisShareTheQuota() {
		try (RedisServer server = RedisServer.start()) {
			String[] settings = settings(server.endpoint(), TestRedis.uniquePrefix(), "allow");
			try (ConfigurableApplicationContext first = start(settings);
					ConfigurableApplicationContext second = start(settings)) {
				List<WebTestClient> fleet = List.of(client(first), client(second));
				// a burst of 10 in all, spread over both (refilled at 10 an hour: Redis's
				// clock is real)
				for (int i = 0; i < 10; i++) {
					// each instance sees what the other spent
					fleet(fleet.get(i % 2), "shared-key").expectStatus()
						.isOk()
						.expectHeader()
						.valueMatches("RateLimit", "\"fleet-burst\";r=" + (9 - i) + ";t=\\d+");
				}
				for (WebTestClient instance : fleet) {
					// a token every 360 s of Redis's real clock, counted from the first
					// request: a second less if the burst took more than a second on a
					// loaded machine
					fleet(instance, "shared-key").expectStatus()
						.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
						.expectHeader()
						.valueMatches("Retry-After", "35[5-9]|360");
				}
				// a Mono handler's @RateLimited cost, charged in Redis too: 7 on one, 3
				// on
				// the other, then nothing left for either
				weighted(fleet.get(0), 7).expectStatus().isOk();
				weighted(fleet.get(1), 3).expectStatus().isOk();
				weighted(fleet.get(0), 1).expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
			}
		}
	}

	@Test
	void twoTierReservoirsNeverAdmitMoreThanTheSharedQuota() {
		try (RedisServer server = RedisServer.start()) {
			String[] settings = settings(server.endpoint(), TestRedis.uniquePrefix(), "allow");
			String[] withReservoir = Arrays.copyOf(settings, settings.length + 1);
			withReservoir[settings.length] = "--ratelimit.redis.reservoir=4";
			try (ConfigurableApplicationContext first = start(withReservoir);
					ConfigurableApplicationContext second = start(withReservoir)) {
				List<WebTestClient> fleet = List.of(client(first), client(second));
				int allowed = 0;
				for (int i = 0; i < 16; i++) {
					HttpStatus status = HttpStatus.valueOf(
							fleet(fleet.get(i % 2), "reservoir-key").returnResult(String.class).getStatus().value());
					assertThat(status).isIn(HttpStatus.OK, HttpStatus.TOO_MANY_REQUESTS);
					allowed += (status == HttpStatus.OK) ? 1 : 0;
				}
				// permits taken ahead are spent in Redis: the fleet shares the burst of
				// 10, and each instance serves from what it took
				assertThat(allowed).isBetween(4, 10);
				fleet(fleet.get(0), "reservoir-key").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
			}
		}
	}

	@Test
	void answersWith503WhenRedisIsGoneAndTheModeIsDeny() {
		try (RedisServer server = RedisServer.start()) {
			String[] settings = settings(server.endpoint(), TestRedis.uniquePrefix(), "deny");
			try (ConfigurableApplicationContext application = start(settings)) {
				WebTestClient client = client(application);
				fleet(client, "deny-key").expectStatus().isOk();
				server.stop();
				fleet(client, "deny-key").expectStatus()
					.isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
					.expectHeader()
					.exists("Retry-After")
					.expectHeader()
					.contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
					.expectBody()
					.jsonPath("$.status")
					.isEqualTo(503)
					.jsonPath("$.title")
					.isEqualTo("Service Unavailable");
				// an annotated Mono handler is refused alike, by its error signal
				weighted(client, 1).expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
			}
		}
	}

	private static WebTestClient.ResponseSpec fleet(WebTestClient client, String apiKey) {
		return client.get().uri("/api/fleet").header("X-API-Key", apiKey).exchange();
	}

	private static WebTestClient.ResponseSpec weighted(WebTestClient client, int n) {
		return client.get().uri("/api/weighted?n=" + n).header("X-Client", "redis-weighted").exchange();
	}

	private static WebTestClient client(ConfigurableApplicationContext context) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
	}

	private static ConfigurableApplicationContext start(String[] settings) {
		return new SpringApplicationBuilder(ReactiveTestApplication.class).run(settings);
	}

	private static String[] settings(RedisEndpoint endpoint, String prefix, String onFailure) {
		List<String> settings = new ArrayList<>(List.of("--spring.profiles.active=reactive", "--server.port=0",
				"--ratelimit.backend=redis", "--ratelimit.redis.key-prefix=" + prefix,
				"--ratelimit.on-backend-failure=" + onFailure, "--ratelimit.redis.timeout=2s",
				"--spring.data.redis.host=" + endpoint.host(), "--spring.data.redis.port=" + endpoint.port(),
				"--spring.data.redis.database=" + endpoint.database()));
		if (endpoint.password() != null) {
			settings.add("--spring.data.redis.password=" + endpoint.password());
		}
		return settings.toArray(String[]::new);
	}

}
