package dev.ratelimit.sample.geocoding.security;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who may read what of the actuator, over real HTTP: the overview and the health status
 * are open; one client's rate-limit state (which would tell anyone whether a guessed API
 * key is in use), its reset and the health details are the operator's.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ActuatorAccessTests {

	private static final String OPERATOR = "operator:change-me";

	private final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Test
	void anyoneReadsTheOverviewOfTheConfiguration() throws Exception {
		HttpResponse<String> overview = get("/actuator/ratelimits", null, null);
		assertThat(overview.statusCode()).isEqualTo(200);
		assertThat(overview.body()).contains("\"policies\"").contains("\"geocode-burst\"");
	}

	@Test
	void onlyTheOperatorReadsTheStateOfOneClient() throws Exception {
		assertThat(get("/actuator/ratelimits/geocode-burst/demo-free", null, null).statusCode()).isEqualTo(401);
		assertThat(get("/actuator/ratelimits/api/guessed-key?tier=free", null, null).statusCode()).isEqualTo(401);
		assertThat(get("/actuator/ratelimits/geocode-burst/demo-free", "demo-paid", null).statusCode()).isEqualTo(403);
		HttpResponse<String> operator = get("/actuator/ratelimits/geocode-burst/demo-free", null, OPERATOR);
		assertThat(operator.statusCode()).isEqualTo(200);
		assertThat(operator.body()).contains("\"policy\":\"geocode-burst\"");
	}

	@Test
	void onlyTheOperatorListsSetsOrRemovesOverrides() throws Exception {
		String path = "/actuator/ratelimitoverrides/api/demo-free";
		String body = "{\"limits\":[{\"rate\":\"5000/1m\"}]}";
		assertThat(get("/actuator/ratelimitoverrides", null, null).statusCode()).isEqualTo(401);
		assertThat(send("POST", path, body, null, null).statusCode()).isEqualTo(401);
		assertThat(send("POST", path, body, "demo-paid", null).statusCode()).isEqualTo(403);
		assertThat(send("DELETE", path, null, null, null).statusCode()).isEqualTo(401);
		assertThat(get("/actuator/ratelimitoverrides", null, OPERATOR).body()).isEqualTo("{\"overrides\":[]}");

		assertThat(send("POST", path, body, null, OPERATOR).statusCode()).isEqualTo(204);
		assertThat(get(path, null, OPERATOR).body()).contains("\"rate\":\"5000/1m\"");
		assertThat(send("DELETE", path, null, null, OPERATOR).statusCode()).isEqualTo(204);
		assertThat(get(path, null, OPERATOR).statusCode()).isEqualTo(404);
	}

	@Test
	void anyoneSeesTheHealthStatusButOnlyTheOperatorItsDetails() throws Exception {
		for (String path : new String[] { "/actuator/health", "/actuator/health/rateLimit" }) {
			HttpResponse<String> anonymous = get(path, null, null);
			assertThat(anonymous.statusCode()).as(path).isEqualTo(200);
			assertThat(anonymous.body()).as(path)
				.contains("\"status\":\"UP\"")
				.doesNotContain("details")
				.doesNotContain("backend");
			assertThat(get(path, "demo-paid", null).body()).as(path).doesNotContain("details");
		}
		assertThat(get("/actuator/health/rateLimit", null, OPERATOR).body()).contains("\"backend\":\"memory\"");
	}

	private HttpResponse<String> get(String path, @Nullable String apiKey, @Nullable String credentials)
			throws IOException, InterruptedException {
		return send("GET", path, null, apiKey, credentials);
	}

	private HttpResponse<String> send(String method, String path, @Nullable String json, @Nullable String apiKey,
			@Nullable String credentials) throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.method(method,
					(json != null) ? HttpRequest.BodyPublishers.ofString(json) : HttpRequest.BodyPublishers.noBody());
		if (json != null) {
			request.header("Content-Type", "application/json");
		}
		if (apiKey != null) {
			request.header("X-API-Key", apiKey);
		}
		if (credentials != null) {
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
