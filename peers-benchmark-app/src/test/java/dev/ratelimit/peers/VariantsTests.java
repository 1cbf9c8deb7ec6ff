package dev.ratelimit.peers;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Each variant of the application over real HTTP, on a Redis of this class's own: with
 * the free tier at 2 requests and the paid tier at 3 (an hour each, so that nothing
 * refills while the test runs), every limiting variant refuses the request beyond its
 * tier's limit with 429, for each API key apart, and {@code off} refuses none.
 */
class VariantsTests {

	private static final String[] TINY_LIMITS = { "--peers.tiers.free.permits=2",
			"--peers.tiers.free.period-seconds=3600", "--peers.tiers.paid.permits=3",
			"--peers.tiers.paid.period-seconds=3600" };

	private static final HttpClient client = HttpClient.newHttpClient();

	private static RedisServer redis;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@ParameterizedTest
	@ValueSource(
			strings = { "memory", "redis", "redis-reservoir", "resilience4j", "bucket4j-memory", "bucket4j-redis" })
	void refusesTheRequestBeyondItsTiersLimitForEachApiKey(String variant) throws Exception {
		try (ConfigurableApplicationContext app = start(variant, redis.port(), TINY_LIMITS)) {
			// a key the map does not list is of the free tier
			assertThat(statuses(app, "unlisted-" + UUID.randomUUID(), 3)).containsExactly(200, 200, 429);
			assertThat(statuses(app, "demo-free", 3)).containsExactly(200, 200, 429);
			assertThat(statuses(app, "demo-paid", 4)).containsExactly(200, 200, 200, 429);
		}
	}

	@Test
	void offRefusesNoRequest() throws Exception {
		try (ConfigurableApplicationContext app = start("off", redis.port(), TINY_LIMITS)) {
			assertThat(statuses(app, "demo-free", 5)).containsOnly(200);
		}
	}

	@Test
	void countsTheRedisCallsThatFailedAndAllowsTheirRequests() throws Exception {
		int nothingListens = RedisServer.freePort();
		try (ConfigurableApplicationContext app = start("redis", nothingListens,
				"--ratelimit.redis.startup-timeout=0")) {
			assertThat(statuses(app, "demo-paid", 3)).containsOnly(200);
			assertThat(Long.parseLong(get(app, "/peers/backend-failures", "demo-paid").body())).isPositive();
		}
	}

	@Test
	void refusesToStartWithoutExactlyOneVariant() {
		assertThatException().isThrownBy(() -> start("memory,resilience4j", redis.port()).close())
			.withMessageContaining("exactly one variant of [off, memory, redis");
	}

	private static ConfigurableApplicationContext start(String profiles, int redisPort, String... arguments) {
		List<String> all = new ArrayList<>(List.of("--spring.profiles.active=" + profiles, "--server.port=0",
				"--spring.main.banner-mode=off", "--logging.level.root=WARN",
				"--spring.data.redis.host=" + redis.endpoint().host(), "--spring.data.redis.port=" + redisPort,
				"--ratelimit.redis.key-prefix=" + TestRedis.uniquePrefix()));
		all.addAll(List.of(arguments));
		return new SpringApplicationBuilder(PeersApplication.class).run(all.toArray(String[]::new));
	}

	private static List<Integer> statuses(ConfigurableApplicationContext app, String apiKey, int requests)
			throws IOException, InterruptedException {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			statuses.add(get(app, "/api/hello", apiKey).statusCode());
		}
		return statuses;
	}

	private static HttpResponse<String> get(ConfigurableApplicationContext app, String path, String apiKey)
			throws IOException, InterruptedException {
		int port = ((WebServerApplicationContext) app).getWebServer().getPort();
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header(ApiKeyTiers.HEADER, apiKey)
			.build();
		return client.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
