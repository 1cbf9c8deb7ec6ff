package dev.ratelimit.sample.geocoding.docs;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.core.docs.DocExamples.ConsoleCommand;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The overrides walk-through of docs/SAMPLE.md, run against a fresh sample over real HTTP
 * on a clock that stands still: the client's spent permits carry over to its override,
 * and come back under its tier when the override is removed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(SampleOverridesDocsTests.Clock.class)
@DirtiesContext
class SampleOverridesDocsTests {

	private static final String REVERSE = "/api/reverse?lat=34&lon=-6";

	private static final String OVERRIDE = "/actuator/ratelimitoverrides/api/demo-free";

	@LocalServerPort
	private int port;

	@Test
	void anOverrideRaisesTheLimitsOfOneClientKeepingWhatItSpent() throws Exception {
		List<ConsoleCommand> commands = DocExamples.console("docs/SAMPLE.md", "overrides");
		assertThat(commands).extracting(ConsoleCommand::command)
			.containsExactly(
					"for i in $(seq 1 60); do curl -s -o /dev/null -H 'X-API-Key: demo-free' 'localhost:8080/api/reverse?lat=34&lon=-6'; done",
					"curl -s -o /dev/null -D - -H 'X-API-Key: demo-free' 'localhost:8080/api/reverse?lat=34&lon=-6' | grep -E '^HTTP|^RateLimit:'",
					"curl -s -o /dev/null -w '%{http_code}\\n' -u operator:change-me -H 'Content-Type: application/json' -d '{\"limits\":[{\"rate\":\"100/1m\"}],\"expires\":\"2030-01-01T00:00:00Z\"}' localhost:8080/actuator/ratelimitoverrides/api/demo-free",
					"curl -s -u operator:change-me localhost:8080/actuator/ratelimitoverrides",
					"curl -s -o /dev/null -D - -H 'X-API-Key: demo-free' 'localhost:8080/api/reverse?lat=34&lon=-6' | grep -E '^HTTP|^RateLimit:'",
					"curl -s -o /dev/null -w '%{http_code}\\n' -u operator:change-me -X DELETE localhost:8080/actuator/ratelimitoverrides/api/demo-free",
					"curl -s -o /dev/null -D - -H 'X-API-Key: demo-free' 'localhost:8080/api/reverse?lat=34&lon=-6' | grep -E '^HTTP|^RateLimit:'");
		for (int i = 0; i < 60; i++) {
			send("GET", REVERSE, null, false);
		}
		ShownOutput.response(commands.get(1).output(), send("GET", REVERSE, null, false));
		assertThat(send("POST", OVERRIDE, "{\"limits\":[{\"rate\":\"100/1m\"}],\"expires\":\"2030-01-01T00:00:00Z\"}",
				true)
			.statusCode()).hasToString(commands.get(2).output().strip());
		ShownOutput.json(commands.get(3).output(), send("GET", "/actuator/ratelimitoverrides", null, true).body());
		ShownOutput.response(commands.get(4).output(), send("GET", REVERSE, null, false));
		assertThat(send("DELETE", OVERRIDE, null, true).statusCode()).hasToString(commands.get(5).output().strip());
		ShownOutput.response(commands.get(6).output(), send("GET", REVERSE, null, false));
	}

	private HttpResponse<String> send(String method, String path, String json, boolean operator) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.method(method,
					(json != null) ? HttpRequest.BodyPublishers.ofString(json) : HttpRequest.BodyPublishers.noBody());
		if (json != null) {
			request.header("Content-Type", "application/json");
		}
		if (operator) {
			request.header("Authorization", "Basic "
					+ Base64.getEncoder().encodeToString("operator:change-me".getBytes(StandardCharsets.UTF_8)));
		}
		else {
			request.header("X-API-Key", "demo-free");
		}
		return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
