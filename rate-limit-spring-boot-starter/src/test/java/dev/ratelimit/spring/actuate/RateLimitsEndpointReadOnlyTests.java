package dev.ratelimit.spring.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Boot's {@code management.endpoint.ratelimits.access=read-only}, the endpoint reads
 * but cannot reset, not even for an operator.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.geocode-burst.key=api-key",
				"ratelimit.policies.geocode-burst.limits[0].rate=5/1s", "ratelimit.filters[0].patterns=/api/geocode",
				"ratelimit.filters[0].policies=geocode-burst", "management.endpoints.web.exposure.include=ratelimits",
				"management.endpoint.ratelimits.access=read-only" })
class RateLimitsEndpointReadOnlyTests {

	@LocalServerPort
	private int port;

	@Test
	void readsButDoesNotResetWhenAccessIsReadOnly() throws Exception {
		HttpClient http = HttpClient.newHttpClient();
		URI client = URI.create("http://localhost:" + this.port + "/actuator/ratelimits/geocode-burst/demo-free");
		assertThat(
				http.send(HttpRequest.newBuilder(client).build(), HttpResponse.BodyHandlers.discarding()).statusCode())
			.isEqualTo(200);
		String credentials = ActuatorTestApplication.OPERATOR + ":" + ActuatorTestApplication.OPERATOR_PASSWORD;
		HttpRequest delete = HttpRequest.newBuilder(client)
			.DELETE()
			.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)))
			.build();
		assertThat(http.send(delete, HttpResponse.BodyHandlers.discarding()).statusCode()).isIn(404, 405);
	}

}
