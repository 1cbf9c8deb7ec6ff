package dev.ratelimit.spring.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.RateLimitsEndpointJson;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} endpoint, the health contributor and the metrics over real HTTP,
 * with the endpoint exposed. The clock stands still, so that an endpoint read and a
 * response's headers describe the same instant.
 */
@SpringBootTest(classes = { ActuatorTestApplication.class, RateLimitsEndpointWebTests.UserController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.on-backend-failure=deny", "ratelimit.policies.geocode-burst.key=api-key",
				"ratelimit.policies.geocode-burst.limits[0].algorithm=token-bucket",
				"ratelimit.policies.geocode-burst.limits[0].rate=5/1s",
				"ratelimit.policies.geocode-burst.limits[0].capacity=10", "ratelimit.policies.counted.key=api-key",
				"ratelimit.policies.counted.tiers.free[0].algorithm=fixed-window",
				"ratelimit.policies.counted.tiers.free[0].rate=4/1h",
				"ratelimit.policies.counted.tiers.paid[0].rate=100/1h", "ratelimit.filters[0].patterns=/api/geocode",
				"ratelimit.filters[0].methods=GET", "ratelimit.filters[0].policies=geocode-burst",
				"ratelimit.filters[1].patterns=/api/counted", "ratelimit.filters[1].policies=counted",
				"management.endpoints.web.exposure.include=ratelimits,health,metrics",
				"management.endpoint.health.show-details=always" })
class RateLimitsEndpointWebTests {

	private static final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Test
	void overviewDescribesTheBackendItsFailureModeThePoliciesAndTheFilters() throws Exception {
		HttpResponse<String> response = send("GET", "/actuator/ratelimits", null, false);
		assertThat(response.statusCode()).isEqualTo(200);
		RateLimitsEndpointJson.assertOverview(JsonPath.parse(response.body()));
	}

	@Test
	void perKeyReadShowsWhatTheLastResponsesHeadersSaidAndConsumesNothing() throws Exception {
		HttpResponse<String> last = null;
		for (int i = 0; i < 3; i++) {
			last = call("/api/geocode", "reader-key");
			assertThat(last.statusCode()).isEqualTo(200);
		}
		HttpResponse<String> lastCall = last;
		for (int read = 0; read < 3; read++) {
			HttpResponse<String> state = send("GET", "/actuator/ratelimits/geocode-burst/reader-key", null, false);
			assertThat(state.statusCode()).isEqualTo(200);
			RateLimitsEndpointJson.assertStateAsTheHeadersSaid(JsonPath.parse(state.body()),
					(name) -> header(lastCall, name));
		}
		assertThat(header(call("/api/geocode", "reader-key"), "X-RateLimit-Remaining")).isEqualTo("6");
	}

	@Test
	void perKeyReadOfAClientNeverSeenShowsFullLimitsOfTheRequestedTier() throws Exception {
		DocumentContext json = JsonPath
			.parse(send("GET", "/actuator/ratelimits/counted/unseen-key?tier=PAID", null, false).body());
		assertThat(json.read("$.tier", String.class)).isEqualTo("paid");
		assertThat(json.read("$.limits[0].limit", Long.class)).isEqualTo(100);
		assertThat(json.read("$.limits[0].remaining", Long.class)).isEqualTo(100);
		assertThat(json.read("$.limits[0].resetSeconds", Long.class)).isZero();
	}

	@Test
	void perKeyReadForATierThePolicyDoesNotListShowsTheDefaultTiersLimits() throws Exception {
		DocumentContext json = JsonPath
			.parse(send("GET", "/actuator/ratelimits/counted/gold-key?tier=gold", null, false).body());
		assertThat(json.read("$.tier", String.class)).isEqualTo("gold");
		assertThat(json.read("$.limits[0].algorithm", String.class)).isEqualTo("fixed-window");
		assertThat(json.read("$.limits[0].limit", Long.class)).isEqualTo(4);
	}

	@Test
	void perKeyReadOfAnUnknownPolicyIsNotFound() throws Exception {
		assertThat(send("GET", "/actuator/ratelimits/no-such-policy/some-key", null, false).statusCode())
			.isEqualTo(404);
	}

	@Test
	void resetNeedsAnOperatorAndThenGivesTheClientAFullBucket() throws Exception {
		for (int i = 0; i < 10; i++) {
			assertThat(call("/api/geocode", "reset-key").statusCode()).isEqualTo(200);
		}
		assertThat(call("/api/geocode", "reset-key").statusCode()).isEqualTo(429);
		assertThat(send("DELETE", "/actuator/ratelimits/geocode-burst/reset-key", null, false).statusCode())
			.isEqualTo(401);
		assertThat(call("/api/geocode", "reset-key").statusCode()).isEqualTo(429);
		assertThat(send("DELETE", "/actuator/ratelimits/geocode-burst/reset-key", null, true).statusCode())
			.isEqualTo(204);
		DocumentContext state = JsonPath
			.parse(send("GET", "/actuator/ratelimits/geocode-burst/reset-key", null, false).body());
		assertThat(state.read("$.limits[0].remaining", Long.class)).isEqualTo(10);
		HttpResponse<String> next = call("/api/geocode", "reset-key");
		assertThat(next.statusCode()).isEqualTo(200);
		assertThat(header(next, "X-RateLimit-Remaining")).isEqualTo("9");
	}

	@Test
	void aClientKeyMayContainASlash() throws Exception {
		String apiKey = "ab/CD+ef/==";
		for (int i = 0; i < 3; i++) {
			assertThat(call("/api/geocode", apiKey).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> state = send("GET", "/actuator/ratelimits/geocode-burst/" + apiKey, null, false);
		assertThat(state.statusCode()).isEqualTo(200);
		assertThat(JsonPath.parse(state.body()).read("$.limits[0].remaining", Long.class)).isEqualTo(7);
		assertThat(send("DELETE", "/actuator/ratelimits/geocode-burst/" + apiKey, null, true).statusCode())
			.isEqualTo(204);
		assertThat(header(call("/api/geocode", apiKey), "X-RateLimit-Remaining")).isEqualTo("9");
	}

	@Test
	void aClientKeyedByAnAnnotationIsNamedWithTheAnnotationsStrategy() throws Exception {
		for (int i = 0; i < 4; i++) {
			assertThat(call("/api/users/42", null).statusCode()).isEqualTo(200);
		}
		// the annotation keys the policy by #{#userId} (URL-encoded below); any
		// expression would give the same key
		String annotated = "/actuator/ratelimits/geocode-burst/42?strategy=%23%7B%23userId%7D";
		HttpResponse<String> state = send("GET", annotated, null, false);
		assertThat(state.statusCode()).isEqualTo(200);
		assertThat(JsonPath.parse(state.body()).read("$.limits[0].remaining", Long.class)).isEqualTo(6);
		// by the policy's own strategy, 42 is an API key that was never seen
		HttpResponse<String> asApiKey = send("GET", "/actuator/ratelimits/geocode-burst/42", null, false);
		assertThat(JsonPath.parse(asApiKey.body()).read("$.limits[0].remaining", Long.class)).isEqualTo(10);
		assertThat(send("DELETE", annotated, null, true).statusCode()).isEqualTo(204);
		assertThat(header(call("/api/users/42", null), "X-RateLimit-Remaining")).isEqualTo("9");
	}

	@Test
	void anInvalidKeyStrategyIsABadRequest() throws Exception {
		HttpResponse<String> response = send("GET", "/actuator/ratelimits/geocode-burst/42?strategy=cookie", null,
				false);
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(send("DELETE", "/actuator/ratelimits/geocode-burst/42?strategy=cookie", null, true).statusCode())
			.isEqualTo(400);
	}

	@Test
	void resetOfAnUnknownPolicyIsABadRequest() throws Exception {
		assertThat(send("DELETE", "/actuator/ratelimits/no-such-policy/some-key", null, true).statusCode())
			.isEqualTo(400);
	}

	@Test
	void countsExactlyTheAllowedAndTheRejectedRequests() throws Exception {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			statuses.add(call("/api/counted", "counted-key").statusCode());
		}
		assertThat(statuses).containsExactly(200, 200, 200, 200, 429, 429, 429);
		assertThat(requests("allowed")).isEqualTo(4);
		assertThat(requests("rejected")).isEqualTo(3);
	}

	@Test
	void healthShowsTheRateLimitBackend() throws Exception {
		HttpResponse<String> response = send("GET", "/actuator/health/rateLimit", null, false);
		assertThat(response.statusCode()).isEqualTo(200);
		DocumentContext json = JsonPath.parse(response.body());
		assertThat(json.read("$.status", String.class)).isEqualTo("UP");
		assertThat(json.read("$.details.backend", String.class)).isEqualTo("memory");
		assertThat(json.read("$.details.failureMode", String.class)).isEqualTo("deny");
	}

	private double requests(String outcome) throws Exception {
		HttpResponse<String> response = send("GET",
				"/actuator/metrics/ratelimit.requests?tag=policy:counted&tag=tier:free&tag=outcome:" + outcome, null,
				false);
		assertThat(response.statusCode()).isEqualTo(200);
		return JsonPath.parse(response.body()).read("$.measurements[0].value", Double.class);
	}

	private HttpResponse<String> call(String path, String apiKey) throws IOException, InterruptedException {
		return send("GET", path, apiKey, false);
	}

	private HttpResponse<String> send(String method, String path, String apiKey, boolean operator)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.method(method, HttpRequest.BodyPublishers.noBody());
		if (apiKey != null) {
			request.header("X-API-Key", apiKey);
		}
		if (operator) {
			String credentials = ActuatorTestApplication.OPERATOR + ":" + ActuatorTestApplication.OPERATOR_PASSWORD;
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static String header(HttpResponse<?> response, String name) {
		return response.headers().firstValue(name).orElseThrow();
	}

	/**
	 * A handler method whose annotation keys the {@code geocode-burst} policy by its path
	 * variable instead of the policy's API key.
	 */
	@RestController
	static class UserController {

		@GetMapping("/api/users/{userId}")
		@RateLimited(policy = "geocode-burst", key = "#{#userId}")
		String user(@PathVariable String userId) {
			return userId;
		}

	}

}
