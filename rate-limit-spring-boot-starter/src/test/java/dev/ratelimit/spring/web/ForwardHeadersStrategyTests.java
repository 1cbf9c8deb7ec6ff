package dev.ratelimit.spring.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client on 127.0.0.1, which no {@code ratelimit.client.trusted-proxies} lists, sends a
 * new {@code X-Forwarded-For} with each request, on a real Tomcat, under each
 * {@code server.forward-headers-strategy} that starts. It must not choose its {@code ip}
 * key: the policy {@code per-ip} (2 per minute) rejects its third request. The strategies
 * that would let it choose its key ({@code native} without chosen internal proxies) fail
 * start-up, except on a detected cloud platform, where only a caller on a private address
 * such as 127.0.0.1 can choose it: see {@code ServerForwardHeadersCheckTests}.
 */
@SpringBootTest(classes = { WebTestApplication.class, ForwardHeadersStrategyTests.ForwardedController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT)
@ActiveProfiles("mvc")
class ForwardHeadersStrategyTests {

	private static final HttpClient http = HttpClient.newHttpClient();

	@Nested
	@TestPropertySource(properties = "server.forward-headers-strategy=none")
	class None extends Client {

		@Test
		void aClientCannotChooseItsKey() throws Exception {
			assertThat(callsForwardedFor("203.0.113.1", "203.0.113.2", "203.0.113.3")).containsExactly("200 127.0.0.1",
					"200 127.0.0.1", "429");
		}

	}

	@Nested
	@TestPropertySource(properties = "server.forward-headers-strategy=framework")
	class Framework extends Client {

		@Test
		void aClientCannotChooseItsKeyThoughTheApplicationSeesTheForwardedAddress() throws Exception {
			// Spring's ForwardedHeaderFilter answers the left-most X-Forwarded-For as the
			// remote address
			assertThat(callsForwardedFor("203.0.113.1", "203.0.113.2", "203.0.113.3"))
				.containsExactly("200 203.0.113.1", "200 203.0.113.2", "429");
		}

	}

	@Nested
	@TestPropertySource(properties = { "server.forward-headers-strategy=framework",
			"ratelimit.client.trusted-proxies=127.0.0.1/32" })
	class FrameworkBehindATrustedProxy extends Client {

		@Test
		void theForwardedAddressOfATrustedProxyIsTheKey() throws Exception {
			assertThat(callsForwardedFor("203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.3", "203.0.113.3"))
				.containsExactly("200 203.0.113.1", "200 203.0.113.2", "200 203.0.113.3", "200 203.0.113.3", "429");
		}

	}

	@Nested
	@TestPropertySource(properties = { "server.forward-headers-strategy=native",
			"server.tomcat.remoteip.internal-proxies=192.0.2.0/24" })
	class NativeWithChosenInternalProxies extends Client {

		@Test
		void aClientThatIsNotAnInternalProxyCannotChooseItsKey() throws Exception {
			// Tomcat's RemoteIpValve believes 192.0.2.0/24 only, not the loopback address
			// it believes by default
			assertThat(callsForwardedFor("203.0.113.1", "203.0.113.2", "203.0.113.3")).containsExactly("200 127.0.0.1",
					"200 127.0.0.1", "429");
		}

	}

	/**
	 * On a detected cloud platform Spring Boot turns Tomcat's RemoteIpValve on, which
	 * believes X-Forwarded-For from every private and loopback address, 127.0.0.1 among
	 * them: here the caller on 127.0.0.1 plays the ingress, which appends the address of
	 * the client it saw.
	 */
	@Nested
	@TestPropertySource(properties = "spring.main.cloud-platform=kubernetes")
	class NativeOnACloudPlatform extends Client {

		@Test
		void aClientBehindAPrivateProxyCannotChooseItsKeyWhateverItForgesLeftOfItsAddress() throws Exception {
			assertThat(callsForwardedFor("198.51.100.1, 203.0.113.7", "198.51.100.2, 203.0.113.7",
					"10.0.0.9, 203.0.113.7"))
				.containsExactly("200 203.0.113.7", "200 203.0.113.7", "429");
		}

		@Test
		void eachClientAddressThatTheProxySawHasItsOwnQuota() throws Exception {
			assertThat(callsForwardedFor("198.51.100.1, 203.0.113.8", "198.51.100.1, 203.0.113.9",
					"198.51.100.2, 203.0.113.8", "198.51.100.2, 203.0.113.9", "198.51.100.3, 203.0.113.8"))
				.containsExactly("200 203.0.113.8", "200 203.0.113.9", "200 203.0.113.8", "200 203.0.113.9", "429");
		}

		@Test
		void aCallerOnAPrivateAddressCanChooseItsKeyAsTheStartUpWarningSays() throws Exception {
			assertThat(callsForwardedFor("203.0.113.20", "203.0.113.21", "203.0.113.22"))
				.containsExactly("200 203.0.113.20", "200 203.0.113.21", "200 203.0.113.22");
		}

	}

	abstract static class Client {

		@LocalServerPort
		private int port;

		@Autowired
		private MutableTimeSource clock;

		@BeforeEach
		void nextWindow() {
			this.clock.advance(Duration.ofHours(1));
		}

		/**
		 * Calls from 127.0.0.1, each with the given X-Forwarded-For; answers each call's
		 * status and, if allowed, the remote address the application saw.
		 */
		List<String> callsForwardedFor(String... forwarded) throws IOException, InterruptedException {
			List<String> answers = new ArrayList<>();
			for (String address : forwarded) {
				HttpRequest request = HttpRequest
					.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/api/forwarded"))
					.header("X-Forwarded-For", address)
					.build();
				HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
				answers.add((response.statusCode() == 200) ? "200 " + response.body()
						: Integer.toString(response.statusCode()));
			}
			return answers;
		}

	}

	@RestController
	static class ForwardedController {

		@GetMapping("/api/forwarded")
		@RateLimited("per-ip")
		String remoteAddress(HttpServletRequest request) {
			return request.getRemoteAddr();
		}

	}

}
