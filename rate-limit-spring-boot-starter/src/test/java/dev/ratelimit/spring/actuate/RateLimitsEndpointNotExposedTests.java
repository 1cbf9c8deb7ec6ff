package dev.ratelimit.spring.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without {@code management.endpoints.web.exposure.include} naming it, the
 * {@code ratelimits} endpoint does not exist: an application never exposes its clients'
 * state, nor a way to reset it, by merely adding the starter.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.geocode-burst.key=api-key",
				"ratelimit.policies.geocode-burst.limits[0].rate=5/1s", "ratelimit.filters[0].patterns=/api/geocode",
				"ratelimit.filters[0].policies=geocode-burst" })
class RateLimitsEndpointNotExposedTests {

	@LocalServerPort
	private int port;

	@Autowired
	private ApplicationContext context;

	@Test
	void isAbsentWhenNotExposed() throws Exception {
		assertThat(this.context.getBeansOfType(RateLimitsEndpoint.class)).isEmpty();
		HttpClient http = HttpClient.newHttpClient();
		for (String path : new String[] { "/actuator/ratelimits", "/actuator/ratelimits/geocode-burst/demo-free" }) {
			HttpResponse<String> response = http.send(
					HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as(path).isEqualTo(404);
		}
	}

}
