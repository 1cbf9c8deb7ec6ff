package dev.ratelimit.spring.countif;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.testsupport.CountingPasswordEncoder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * {@code count-if} reads the status the client finally gets, on Tomcat over real HTTP,
 * whoever answers a failure: Spring Security (401, 403), an {@code @ExceptionHandler}, a
 * {@code ResponseStatusException}, the container (an unhandled exception, 500 through
 * {@code /error}; {@code sendError}), or an asynchronous answer. A policy of 3 failures
 * per hour then refuses the fourth call. With its cost reserved before the handler (the
 * default), 50 wrong logins in flight together get exactly 5 tries; and a rule that runs
 * before Spring Security caps wrong HTTP Basic passwords, so that the password encoder
 * checks no more of them than the limit.
 */
@SpringBootTest(classes = FailureStatusTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.errors.key=header:X-Client",
				"ratelimit.policies.errors.count-if=#{#response.status >= 400}",
				"ratelimit.policies.errors.limits[0].algorithm=fixed-window",
				"ratelimit.policies.errors.limits[0].rate=3/1h",
				"ratelimit.filters[0].patterns=/login,/secured/denied,/fail/**,/async/**",
				"ratelimit.filters[0].policies=errors", "ratelimit.policies.guesses.key=header:X-Client",
				"ratelimit.policies.guesses.count-if=#{#response.status == 401}",
				"ratelimit.policies.guesses.limits[0].algorithm=fixed-window",
				"ratelimit.policies.guesses.limits[0].rate=5/15m", "ratelimit.filters[1].patterns=/login/gated",
				"ratelimit.filters[1].policies=guesses", "ratelimit.policies.basic-failures.key=ip",
				"ratelimit.policies.basic-failures.count-if=#{#response.status == 401}",
				"ratelimit.policies.basic-failures.limits[0].algorithm=fixed-window",
				"ratelimit.policies.basic-failures.limits[0].rate=5/15m",
				"ratelimit.filters[2].patterns=/secured/basic/**", "ratelimit.filters[2].before-security=true",
				"ratelimit.filters[2].policies=basic-failures", "ratelimit.policies.signed-in.key=header:X-Client",
				"ratelimit.policies.signed-in.count-if=#{#principal != null && #response.status == 200}",
				"ratelimit.policies.signed-in.limits[0].algorithm=fixed-window",
				"ratelimit.policies.signed-in.limits[0].rate=3/1h", "ratelimit.filters[3].patterns=/secured/whoami",
				"ratelimit.filters[3].policies=signed-in", "spring.mvc.async.request-timeout=10s" })
class CountIfFinalStatusTests {

	private static final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	@LocalServerPort
	private int port;

	@Autowired
	private FailureStatusTestApplication.FailingController controller;

	@Autowired
	private CountingPasswordEncoder encoder;

	static Stream<Arguments> failures() {
		return Stream.of(
				arguments("Spring Security, from a login's BadCredentialsException", "POST",
						"/login?username=user&password=guess", 401),
				arguments("Spring Security, from an AccessDeniedException", "GET", "/secured/denied", 403),
				arguments("an @ExceptionHandler", "GET", "/fail/advice", 422),
				arguments("a ResponseStatusException", "GET", "/fail/status", 409),
				arguments("the container, for an exception nobody handles", "GET", "/fail/unhandled", 500),
				arguments("sendError", "GET", "/fail/sent", 503),
				arguments("a DeferredResult's ResponseStatusException", "GET", "/async/deferred", 410),
				arguments("the container, for a DeferredResult's exception", "GET", "/async/deferred-unhandled", 500),
				arguments("the container, for a Callable's exception", "GET", "/async/callable", 500),
				arguments("a StreamingResponseBody's status", "GET", "/async/streaming", 401),
				arguments("an SSE stream's status", "GET", "/async/sse", 401));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("failures")
	void aFailureCountsByTheStatusTheClientGets(String answeredBy, String method, String path, int status)
			throws Exception {
		String clientKey = UUID.randomUUID().toString();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			statuses.add(send(method, path, clientKey, path.equals("/secured/denied")).statusCode());
		}
		assertThat(statuses).as(answeredBy).containsExactly(status, status, status, 429, 429);
	}

	@Test
	void aConditionReadsThePrincipalOfTheDecisionThoughSpringSecurityHasClearedItsContextBySettlement()
			throws Exception {
		String clientKey = UUID.randomUUID().toString();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			statuses.add(send("GET", "/secured/whoami", clientKey, true).statusCode());
		}
		assertThat(statuses).containsExactly(200, 200, 200, 429, 429);
	}

	@Test
	void successesNeverCount() throws Exception {
		String clientKey = UUID.randomUUID().toString();
		for (int i = 0; i < 10; i++) {
			assertThat(send("POST", "/login?username=user&password=" + FailureStatusTestApplication.PASSWORD, clientKey,
					false)
				.statusCode()).isEqualTo(200);
		}
		assertThat(send("POST", "/login?username=user&password=guess", clientKey, false).statusCode()).isEqualTo(401);
	}

	@Test
	void fiftyWrongLoginsInFlightTogetherGetFiveTries() throws Exception {
		String clientKey = UUID.randomUUID().toString();
		this.controller.closeGate();
		List<CompletableFuture<HttpResponse<String>>> logins = new ArrayList<>();
		try {
			for (int i = 0; i < 50; i++) {
				logins.add(sendAsync("POST", "/login/gated?username=user&password=guess-" + i, clientKey));
			}
			// every login has either reached the handler, where it waits, or been refused
			await().atMost(Duration.ofSeconds(20)).until(() -> this.controller.arrived.get() + refused(logins) == 50);
		}
		finally {
			this.controller.openGate();
		}
		List<Integer> statuses = logins.stream().map((login) -> login.join().statusCode()).toList();
		assertThat(this.controller.arrived.get()).isEqualTo(5);
		assertThat(statuses.stream().filter((status) -> status == 401)).hasSize(5);
		assertThat(statuses.stream().filter((status) -> status == 429)).hasSize(45);
	}

	@Test
	void wrongBasicPasswordsAreCappedBeforeSpringSecurityChecksThem() throws Exception {
		int checksBefore = this.encoder.checks();
		List<CompletableFuture<HttpResponse<String>>> guesses = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			guesses.add(sendAsync(HttpRequest.newBuilder(uri("/secured/basic/hello"))
				.header("Authorization", basic("user", "guess-" + i))
				.GET()
				.build()));
		}
		List<Integer> statuses = guesses.stream().map((guess) -> guess.join().statusCode()).toList();
		assertThat(statuses.stream().filter((status) -> status == 401)).hasSize(5);
		assertThat(statuses.stream().filter((status) -> status == 429)).hasSize(45);
		assertThat(this.encoder.checks() - checksBefore).isEqualTo(5);
		// the right password from the same address is refused too, before any check
		assertThat(send(HttpRequest.newBuilder(uri("/secured/basic/hello"))
			.header("Authorization", basic("user", FailureStatusTestApplication.PASSWORD))
			.GET()
			.build()).statusCode()).isEqualTo(429);
		assertThat(this.encoder.checks() - checksBefore).isEqualTo(5);
	}

	private static long refused(List<CompletableFuture<HttpResponse<String>>> logins) {
		return logins.stream().filter((login) -> login.isDone() && login.join().statusCode() == 429).count();
	}

	private HttpResponse<String> send(String method, String path, String clientKey, boolean signedIn)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.header("X-Client", clientKey)
			.method(method, HttpRequest.BodyPublishers.noBody());
		if (signedIn) {
			request.header("Authorization", basic("user", FailureStatusTestApplication.PASSWORD));
		}
		return send(request.build());
	}

	private CompletableFuture<HttpResponse<String>> sendAsync(String method, String path, String clientKey) {
		return sendAsync(HttpRequest.newBuilder(uri(path))
			.header("X-Client", clientKey)
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build());
	}

	private static HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
		return client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	private static CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
		return client.sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	private static String basic(String user, String password) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

}
