package dev.ratelimit.spring.countif;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.TestRedis;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.RateLimitService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failed logins counted on the Redis backend by a fleet of two applications sharing a
 * real {@code redis-server}: failures made on either instance add up, successes never
 * count (each gives its reserved permit back), and the sixth attempt is refused by both,
 * even with the right password.
 */
class RedisCountIfFleetTests {

	private static final HttpClient client = HttpClient.newHttpClient();

	@Test
	void failedLoginsOnEitherInstanceAddUpAndThenBothRefuseTheRightPassword() throws Exception {
		try (RedisServer server = RedisServer.start()) {
			String[] settings = settings(server.endpoint(), TestRedis.uniquePrefix());
			try (ConfigurableApplicationContext first = start(settings);
					ConfigurableApplicationContext second = start(settings)) {
				List<ConfigurableApplicationContext> fleet = List.of(first, second);
				for (int i = 0; i < 10; i++) {
					assertThat(login(fleet.get(i % 2), "frank", LoginTestApplication.PASSWORD).statusCode())
						.isEqualTo(200);
				}
				// a success's reserved permit comes back once its response is complete,
				// which the client may see first
				await().atMost(Duration.ofSeconds(5)).until(() -> failuresLeft(first, "frank") == 5);
				for (int i = 0; i < 5; i++) {
					assertThat(login(fleet.get(i % 2), "frank", "guess-" + i).statusCode()).isEqualTo(401);
					// charged once the response is complete, which the client may see
					// first
					long left = 4 - i;
					await().atMost(Duration.ofSeconds(5)).until(() -> failuresLeft(first, "frank") == left);
				}
				for (ConfigurableApplicationContext instance : fleet) {
					HttpResponse<String> refused = login(instance, "frank", LoginTestApplication.PASSWORD);
					assertThat(refused.statusCode()).isEqualTo(429);
					assertThat(refused.body()).contains("login-by-user");
				}
			}
		}
	}

	private static long failuresLeft(ConfigurableApplicationContext context, String username) {
		RateLimitService service = context.getBean(RateLimitService.class);
		Policy policy = service.policies().get("login-by-user");
		KeyedLimit limit = Policy.keyedLimit(policy.name(), "expr:" + username, policy.limits(), 0);
		return service.limiter().inspect(List.of(limit)).get(0).remaining();
	}

	private static HttpResponse<String> login(ConfigurableApplicationContext context, String username, String password)
			throws IOException, InterruptedException {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/login"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.header("X-Forwarded-For", "192.0.2.10")
			.POST(HttpRequest.BodyPublishers.ofString("username=" + username + "&password=" + password))
			.build();
		return client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static ConfigurableApplicationContext start(String[] settings) {
		return new SpringApplicationBuilder(LoginTestApplication.class).run(settings);
	}

	private static String[] settings(RedisEndpoint endpoint, String prefix) {
		List<String> settings = new ArrayList<>(List.of("--server.port=0", "--ratelimit.backend=redis",
				"--ratelimit.redis.key-prefix=" + prefix, "--ratelimit.redis.timeout=2s",
				"--ratelimit.client.trusted-proxies=127.0.0.1", "--spring.data.redis.host=" + endpoint.host(),
				"--spring.data.redis.port=" + endpoint.port(), "--spring.data.redis.database=" + endpoint.database()));
		for (String policy : LoginTestApplication.LOGIN_POLICIES) {
			settings.add("--" + policy);
		}
		if (endpoint.password() != null) {
			settings.add("--spring.data.redis.password=" + endpoint.password());
		}
		return settings.toArray(String[]::new);
	}

}
