package dev.ratelimit.sample.geocoding.docs;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.jspecify.annotations.Nullable;
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
 * The failed sign-in walk-through of docs/SAMPLE.md, run against a fresh sample over real
 * HTTP on a clock that stands still: five failures, then the username is refused with the
 * right password for the penalty, other usernames go on, and the operator lifts the
 * penalty.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(SampleLoginDocsTests.Clock.class)
@DirtiesContext
class SampleLoginDocsTests {

	@LocalServerPort
	private int port;

	@Test
	void fiveFailedSignInsThenTheUsernameServesItsPenaltyUntilTheOperatorLiftsIt() throws Exception {
		List<ConsoleCommand> commands = DocExamples.console("docs/SAMPLE.md", "login");
		assertThat(commands).extracting(ConsoleCommand::command)
			.containsExactly(
					"for i in 1 2 3 4 5; do curl -s -o /dev/null -w '%{http_code} ' -d username=demo -d password=guess localhost:8080/api/login; done; echo",
					"curl -s -i -d username=demo -d password=demo-password localhost:8080/api/login | grep -E '^HTTP|^Retry-After'",
					"curl -s -o /dev/null -w '%{http_code}\\n' -d username=someone -d password=guess localhost:8080/api/login",
					"curl -s -u operator:change-me localhost:8080/actuator/ratelimits/login-failures-user/demo",
					"curl -s -o /dev/null -w '%{http_code}\\n' -u operator:change-me -X DELETE localhost:8080/actuator/ratelimits/login-failures-user/demo",
					"curl -s -d username=demo -d password=demo-password localhost:8080/api/login");
		List<String> failures = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			failures.add(Integer.toString(login("demo", "guess").statusCode()));
		}
		assertThat(String.join(" ", failures)).isEqualTo(commands.get(0).output().strip());
		ShownOutput.response(commands.get(1).output(), login("demo", "demo-password"));
		assertThat(login("someone", "guess").statusCode()).hasToString(commands.get(2).output().strip());
		ShownOutput.json(commands.get(3).output(),
				send("GET", "/actuator/ratelimits/login-failures-user/demo", null, true).body());
		assertThat(send("DELETE", "/actuator/ratelimits/login-failures-user/demo", null, true).statusCode())
			.hasToString(commands.get(4).output().strip());
		ShownOutput.json(commands.get(5).output(), login("demo", "demo-password").body());
	}

	private HttpResponse<String> login(String username, String password) throws Exception {
		return send("POST", "/api/login", "username=" + username + "&password=" + password, false);
	}

	private HttpResponse<String> send(String method, String path, @Nullable String form, boolean operator)
			throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.method(method,
					(form != null) ? HttpRequest.BodyPublishers.ofString(form) : HttpRequest.BodyPublishers.noBody());
		if (form != null) {
			request.header("Content-Type", "application/x-www-form-urlencoded");
		}
		if (operator) {
			request.header("Authorization", "Basic "
					+ Base64.getEncoder().encodeToString("operator:change-me".getBytes(StandardCharsets.UTF_8)));
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
