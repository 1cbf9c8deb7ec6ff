package dev.ratelimit.spring.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of an application, each on its own port, share one quota in one Redis:
 * together they admit the quota once, not once each.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@ActiveProfiles("mvc")
class RedisBackendTests {

	private static final String KEY_PREFIX = TestRedis.uniquePrefix();

	private static final HttpClient http = HttpClient.newHttpClient();

	private static ConfigurableApplicationContext secondInstance;

	@LocalServerPort
	private int port;

	@Autowired
	private RateLimiter rateLimiter;

	@DynamicPropertySource
	static void redisBackend(DynamicPropertyRegistry registry) {
		RedisEndpoint redis = TestRedis.standalone();
		properties(redis).forEach((property) -> {
			int equals = property.indexOf('=');
			registry.add(property.substring(0, equals), () -> property.substring(equals + 1));
		});
	}

	private static List<String> properties(RedisEndpoint redis) {
		List<String> properties = new ArrayList<>(List.of("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port(), "spring.data.redis.database=" + redis.database(),
				"ratelimit.backend=redis", "ratelimit.redis.key-prefix=" + KEY_PREFIX, "ratelimit.redis.timeout=2s",
				"ratelimit.policies.shared.key=global", "ratelimit.policies.shared.limits[0].rate=4/1h",
				"ratelimit.filters[0].patterns=/api/open", "ratelimit.filters[0].policies=shared"));
		if (redis.password() != null) {
			properties.add("spring.data.redis.password=" + redis.password());
		}
		return properties;
	}

	@AfterAll
	static void stopSecondInstance() {
		if (secondInstance != null) {
			secondInstance.close();
		}
	}

	@Test
	void sharesOneQuotaBetweenTwoInstancesInsteadOfDoublingIt() throws Exception {
		assertThat(this.rateLimiter).isInstanceOf(RedisRateLimiter.class);
		// command-line arguments, so that they win over application-mvc.yml as the test's
		// dynamic properties do
		List<String> arguments = new ArrayList<>(List.of("--server.port=0"));
		properties(TestRedis.standalone()).forEach((property) -> arguments.add("--" + property));
		secondInstance = new SpringApplicationBuilder(WebTestApplication.class).profiles("mvc")
			.run(arguments.toArray(String[]::new));
		int secondPort = secondInstance.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		assertThat(secondPort).isNotEqualTo(this.port);
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			statuses.add(get(this.port));
			statuses.add(get(secondPort));
		}
		assertThat(statuses).containsExactly(200, 200, 200, 200, 429, 429);
	}

	private static int get(int port) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/open")).build();
		return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

}
