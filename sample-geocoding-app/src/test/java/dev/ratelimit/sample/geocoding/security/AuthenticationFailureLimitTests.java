package dev.ratelimit.sample.geocoding.security;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;

import dev.ratelimit.core.RateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

/**
 * The sample caps what Spring Security rejects, over real HTTP, before Security sees it:
 * 50 wrong operator passwords sent together from one address get 10 tries (so 10 password
 * hash checks) and 40 429s; unknown API keys get 20 tries (one more at most, for a guess
 * sent before the last one's charge); a valid key's requests are never held back by it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AuthenticationFailureLimitTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@MockitoSpyBean
	private PasswordEncoder passwordEncoder;

	@Autowired
	private RateLimiter rateLimiter;

	@AfterEach
	void forgetTheFailures() {
		// every test of this context calls from 127.0.0.1
		this.rateLimiter.resetAll();
	}

	@Test
	void fiftyWrongOperatorPasswordsSentTogetherGetTenChecksAndThen429() throws Exception {
		clearInvocations(this.passwordEncoder);
		List<CompletableFuture<HttpResponse<String>>> guesses = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			guesses.add(this.http.sendAsync(operator("guess-" + i), HttpResponse.BodyHandlers.ofString()));
		}
		List<Integer> statuses = guesses.stream().map((guess) -> guess.join().statusCode()).toList();
		assertThat(statuses.stream().filter((status) -> status == 401)).hasSize(10);
		assertThat(statuses.stream().filter((status) -> status == 429)).hasSize(40);
		verify(this.passwordEncoder, times(10)).matches(any(), anyString());
		// the right password is refused too from that address, unchecked, until the
		// window ends
		assertThat(this.http.send(operator("change-me"), HttpResponse.BodyHandlers.ofString()).statusCode())
			.isEqualTo(429);
		verify(this.passwordEncoder, times(10)).matches(any(), anyString());
	}

	@Test
	void unknownApiKeysGetTwentyTriesAndValidKeysAreNeverHeldBack() throws Exception {
		List<CompletableFuture<HttpResponse<String>>> known = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			known.add(this.http.sendAsync(apiKey("demo-paid"), HttpResponse.BodyHandlers.ofString()));
		}
		assertThat(known.stream().map((request) -> request.join().statusCode())).containsOnly(200);
		int guesses = 0;
		int unknown = 0;
		int status;
		do {
			status = this.http.send(apiKey("guessed-" + guesses++), HttpResponse.BodyHandlers.ofString()).statusCode();
			unknown += (status == 401) ? 1 : 0;
		}
		while (status != 429 && guesses < 30);
		// check-then-charge charges each 401 a moment after its client has it: the next
		// guess, sent at once, may pass the check before that charge, so 20 or 21
		assertThat(unknown).isBetween(20, 21);
		assertThat(status).isEqualTo(429);
	}

	private HttpRequest operator(String password) {
		String credentials = "operator:" + password;
		return HttpRequest.newBuilder(uri("/actuator/ratelimits/api/demo-free"))
			.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)))
			.GET()
			.build();
	}

	private HttpRequest apiKey(String key) {
		return HttpRequest.newBuilder(uri("/api/reverse?lat=34.02&lon=-6.84")).header("X-API-Key", key).GET().build();
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

}
