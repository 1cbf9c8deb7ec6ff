package dev.ratelimit.spring.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @RateLimited} handler method that an ERROR dispatch invokes, on a real server
 * (MockMvc makes no error dispatches). The dispatch comes after the filter has released
 * the request's concurrency permits, so the method's own are released when it returns.
 */
@SpringBootTest(classes = ErrorDispatchWebTests.ErrorPageApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.error-pages.key=header:X-Client",
				"ratelimit.policies.error-pages.limits[0].algorithm=concurrency",
				"ratelimit.policies.error-pages.limits[0].max=1" })
class ErrorDispatchWebTests {

	private static final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Test
	void anErrorPageHandlerReleasesItsConcurrencyPermitWhenItReturns() throws Exception {
		for (int request = 1; request <= 3; request++) {
			HttpResponse<String> response = get("/api/failing", "error-client");
			assertThat(response.statusCode()).as("request %d", request).isEqualTo(500);
			assertThat(response.body()).as("request %d", request).isEqualTo("error page");
			// the permit is held while the method runs
			assertThat(response.headers().firstValue(RateLimitHeaders.RATE_LIMIT).orElse(null))
				.as("request %d", request)
				.startsWith("\"error-pages\";r=0;");
		}
	}

	private HttpResponse<String> get(String path, String client) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.header("X-Client", client)
			.GET()
			.build();
		return http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ FailingController.class, ErrorPageController.class })
	static class ErrorPageApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class FailingController {

		@GetMapping("/api/failing")
		String failing() {
			throw new IllegalStateException("the handler fails");
		}

	}

	@RestController
	static class ErrorPageController implements ErrorController {

		@RequestMapping("/error")
		@RateLimited("error-pages")
		String error(HttpServletResponse response) {
			response.setStatus(500);
			return "error page";
		}

	}

}
