package dev.ratelimit.spring.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} endpoint over real HTTP while the backend cannot be reached: a
 * client's state and its reset answer 503 saying what failed (without the hosts the
 * exception names), and work again once the backend is back. The backend's failures are
 * the exceptions the Redis backend throws, raised by a limiter that can be told to fail.
 */
@SpringBootTest(classes = { ActuatorTestApplication.class, RateLimitsEndpointBackendFailureWebTests.Backend.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.burst.key=api-key", "ratelimit.policies.burst.limits[0].rate=10/1h",
				"ratelimit.filters[0].patterns=/api/geocode", "ratelimit.filters[0].policies=burst",
				"management.endpoints.web.exposure.include=ratelimits" })
class RateLimitsEndpointBackendFailureWebTests {

	private static final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Autowired
	private UnreachableBackend backend;

	@AfterEach
	void backendIsBack() {
		this.backend.fail(null);
	}

	@Test
	void answersAReadWith503SayingWhatFailedWhileTheBackendIsUnreachable() throws Exception {
		this.backend.fail(new DataAccessResourceFailureException(
				"Could not read rate-limit state from Redis: Connection refused: localhost/127.0.0.1:6379"));
		HttpResponse<String> response = send("GET", "/actuator/ratelimits/burst/reader", false);
		assertThat(response.statusCode()).isEqualTo(503);
		DocumentContext json = JsonPath.parse(response.body());
		assertThat(json.read("$.status", Integer.class)).isEqualTo(503);
		assertThat(json.read("$.error", String.class)).isEqualTo("Service Unavailable");
		assertThat(json.read("$.policy", String.class)).isEqualTo("burst");
		assertThat(json.read("$.message", String.class))
			.startsWith("Could not read rate-limit state: the backend cannot be reached")
			.doesNotContain("6379")
			.doesNotContain("127.0.0.1");

		this.backend
			.fail(new QueryTimeoutException("Could not read rate-limit state from Redis: no answer within PT0.1S"));
		response = send("GET", "/actuator/ratelimits/burst/reader", false);
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(JsonPath.parse(response.body()).read("$.message", String.class))
			.startsWith("Could not read rate-limit state: the backend did not answer in time");

		this.backend.fail(null);
		response = send("GET", "/actuator/ratelimits/burst/reader", false);
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(JsonPath.parse(response.body()).read("$.limits[0].remaining", Long.class)).isEqualTo(10);
	}

	@Test
	void answersAResetWith503WhileTheBackendIsUnreachableAndResetsOnceItIsBack() throws Exception {
		for (int i = 0; i < 3; i++) {
			assertThat(sendApi("resettable").statusCode()).isEqualTo(200);
		}
		this.backend.fail(new DataAccessResourceFailureException(
				"Could not reset rate-limit state in Redis: Connection refused"));
		HttpResponse<String> response = send("DELETE", "/actuator/ratelimits/burst/resettable", true);
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(JsonPath.parse(response.body()).read("$.message", String.class))
			.startsWith("Could not reset rate-limit state: the backend cannot be reached");

		this.backend.fail(null);
		assertThat(remaining("resettable")).isEqualTo(7);
		assertThat(send("DELETE", "/actuator/ratelimits/burst/resettable", true).statusCode()).isEqualTo(204);
		assertThat(remaining("resettable")).isEqualTo(10);
	}

	@Test
	void keepsTheEndpointsOtherAnswers() throws Exception {
		this.backend.fail(new DataAccessResourceFailureException("Redis is down"));
		assertThat(send("GET", "/actuator/ratelimits", false).statusCode()).isEqualTo(200);
		assertThat(send("GET", "/actuator/ratelimits/no-such-policy/reader", false).statusCode()).isEqualTo(404);
		assertThat(send("DELETE", "/actuator/ratelimits/no-such-policy/reader", true).statusCode()).isEqualTo(400);
		assertThat(send("DELETE", "/actuator/ratelimits/burst/reader", false).statusCode()).isEqualTo(401);
	}

	@Test
	void leavesAFailureThatIsNotTheBackendsUnreachabilityToTheUsualErrorAnswer() throws Exception {
		this.backend.fail(new IllegalStateException("a bug, not an outage"));
		assertThat(send("GET", "/actuator/ratelimits/burst/reader", false).statusCode()).isEqualTo(500);
	}

	private long remaining(String client) throws Exception {
		HttpResponse<String> response = send("GET", "/actuator/ratelimits/burst/" + client, false);
		assertThat(response.statusCode()).isEqualTo(200);
		return JsonPath.parse(response.body()).read("$.limits[0].remaining", Long.class);
	}

	private HttpResponse<String> sendApi(String apiKey) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/api/geocode"))
			.header("X-API-Key", apiKey)
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> send(String method, String path, boolean operator)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.method(method, HttpRequest.BodyPublishers.noBody());
		if (operator) {
			String credentials = ActuatorTestApplication.OPERATOR + ":" + ActuatorTestApplication.OPERATOR_PASSWORD;
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Backend {

		@Bean
		UnreachableBackend unreachableBackend(TimeSource timeSource) {
			return new UnreachableBackend(InMemoryRateLimiter.builder().timeSource(timeSource).build());
		}

	}

	/**
	 * An in-memory limiter whose reads and resets fail, when told to, as the Redis
	 * backend's do while Redis is down.
	 */
	static final class UnreachableBackend implements RateLimiter {

		private final RateLimiter delegate;

		private volatile @Nullable RuntimeException failure;

		UnreachableBackend(RateLimiter delegate) {
			this.delegate = delegate;
		}

		void fail(@Nullable RuntimeException failure) {
			this.failure = failure;
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			return this.delegate.acquire(limits, cost);
		}

		@Override
		public List<LimitStatus> inspect(List<KeyedLimit> limits) {
			throwIfFailing();
			return this.delegate.inspect(limits);
		}

		@Override
		public void release(Decision decision) {
			this.delegate.release(decision);
		}

		@Override
		public void reset(KeyedLimit limit) {
			throwIfFailing();
			this.delegate.reset(limit);
		}

		private void throwIfFailing() {
			RuntimeException current = this.failure;
			if (current != null) {
				throw current;
			}
		}

	}

}
