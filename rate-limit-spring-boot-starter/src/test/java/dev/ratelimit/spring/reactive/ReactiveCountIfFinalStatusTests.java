package dev.ratelimit.spring.reactive;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import reactor.core.publisher.Flux;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.spring.testsupport.CountingPasswordEncoder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * {@code count-if} in a WebFlux application on Netty reads the status the client finally
 * gets, whoever answers an error signal: Spring Security (401, 403), an
 * {@code @ExceptionHandler}, or a {@code WebExceptionHandler} outside every web filter (a
 * {@code ResponseStatusException}, an error nobody handles). A policy of 3 failures per
 * hour then refuses the fourth call. A rule that runs before Spring Security caps wrong
 * HTTP Basic passwords, so that the password encoder checks no more of them than the
 * limit, with BlockHound watching the event loops.
 */
@SpringBootTest(classes = ReactiveFailureStatusTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.policies.errors.key=header:X-Client",
				"ratelimit.policies.errors.count-if=#{#response.status >= 400}",
				"ratelimit.policies.errors.limits[0].algorithm=fixed-window",
				"ratelimit.policies.errors.limits[0].rate=3/1h", "ratelimit.filters[0].patterns=/fail/**",
				"ratelimit.filters[0].policies=errors", "ratelimit.policies.basic-failures.key=ip",
				"ratelimit.policies.basic-failures.count-if=#{#response.status == 401}",
				"ratelimit.policies.basic-failures.limits[0].algorithm=fixed-window",
				"ratelimit.policies.basic-failures.limits[0].rate=5/15m",
				"ratelimit.filters[1].patterns=/secured/basic/**", "ratelimit.filters[1].before-security=true",
				"ratelimit.filters[1].policies=basic-failures" })
class ReactiveCountIfFinalStatusTests {

	@LocalServerPort
	private int port;

	@Autowired
	private CountingPasswordEncoder encoder;

	@BeforeAll
	static void installBlockHound() {
		BlockHoundInstalled.check();
	}

	static Stream<Arguments> failures() {
		return Stream.of(
				arguments("Spring Security, for an anonymous caller's AccessDeniedException", "/fail/denied", false,
						401),
				arguments("Spring Security, for a signed-in caller's AccessDeniedException", "/fail/denied", true, 403),
				arguments("an @ExceptionHandler", "/fail/advice", false, 422),
				arguments("a WebExceptionHandler, for a ResponseStatusException", "/fail/status", false, 409),
				arguments("a WebExceptionHandler, for an error nobody handles", "/fail/unhandled", false, 500));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("failures")
	void aFailureCountsByTheStatusTheClientGets(String answeredBy, String path, boolean signedIn, int status) {
		String clientKey = UUID.randomUUID().toString();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			statuses.add(client().get().uri(path).header("X-Client", clientKey).headers((headers) -> {
				if (signedIn) {
					headers.set("Authorization", basic(ReactiveFailureStatusTestApplication.PASSWORD));
				}
			})
				.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
				.block(Duration.ofSeconds(10)));
		}
		assertThat(statuses).as(answeredBy).containsExactly(status, status, status, 429, 429);
	}

	@Test
	void wrongBasicPasswordsAreCappedBeforeSpringSecurityChecksThem() {
		int checksBefore = this.encoder.checks();
		List<Integer> statuses = Flux.range(0, 50)
			.flatMap(
					(i) -> client().get()
						.uri("/secured/basic/hello")
						.header("Authorization", basic("guess-" + i))
						.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value())),
					50)
			.collectList()
			.block(Duration.ofSeconds(20));
		assertThat(statuses.stream().filter((status) -> status == 401)).hasSize(5);
		assertThat(statuses.stream().filter((status) -> status == 429)).hasSize(45);
		assertThat(this.encoder.checks() - checksBefore).isEqualTo(5);
	}

	private WebClient client() {
		return WebClient.create("http://127.0.0.1:" + this.port);
	}

	private static String basic(String password) {
		return "Basic " + Base64.getEncoder().encodeToString(("user:" + password).getBytes(StandardCharsets.UTF_8));
	}

}
