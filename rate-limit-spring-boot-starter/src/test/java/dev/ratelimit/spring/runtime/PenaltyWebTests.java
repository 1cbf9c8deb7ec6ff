package dev.ratelimit.spring.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.metrics.RateLimitMetrics;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A policy's penalty over real HTTP, on a clock that moves only when the test moves it:
 * once the policy rejects a client, the client is refused for the penalty, whatever its
 * limit says, with {@code Retry-After} the time left; the endpoint shows the penalty and
 * its delete lifts it; the metrics count {@code outcome=penalized}.
 */
@SpringBootTest(classes = RuntimeTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.api.key=header:X-User",
				"ratelimit.policies.api.limits[0].algorithm=fixed-window", "ratelimit.policies.api.limits[0].rate=2/1m",
				"ratelimit.policies.api.penalty=10m", "ratelimit.filters[0].patterns=/api/**",
				"ratelimit.filters[0].policies=api", "management.endpoints.web.exposure.include=ratelimits" })
class PenaltyWebTests {

	@LocalServerPort
	private int port;

	@Autowired
	private MutableTimeSource clock;

	@Autowired
	private MeterRegistry meters;

	@Test
	void aRejectedClientIsRefusedForThePenaltyThenItsLimitAppliesAgain() throws Exception {
		assertThat(call("abuser").statusCode()).isEqualTo(200);
		assertThat(call("abuser").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = call("abuser");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("600");

		// the window has passed, and the limit would allow again: the penalty still holds
		this.clock.advance(Duration.ofMinutes(5));
		HttpResponse<String> penalized = call("abuser");
		assertThat(penalized.statusCode()).isEqualTo(429);
		assertThat(penalized.headers().firstValue("Retry-After")).hasValue("300");
		assertThat(penalized.body()).contains("\"violated-policies\":[\"api\"]");
		assertThat(call("someone-else").statusCode()).isEqualTo(200);
		assertThat(this.meters.get(RateLimitMetrics.REQUESTS).tag("outcome", "penalized").counter().count())
			.isEqualTo(1);
		DocumentContext state = JsonPath.parse(get("/actuator/ratelimits/api/abuser").body());
		assertThat(state.read("$.limits[0].penalized", Boolean.class)).isTrue();
		assertThat(state.read("$.limits[0].resetSeconds", Long.class)).isEqualTo(300);

		this.clock.advance(Duration.ofMinutes(5));
		assertThat(call("abuser").statusCode()).isEqualTo(200);
		assertThat(JsonPath.parse(get("/actuator/ratelimits/api/abuser").body())
			.read("$.limits[0].penalized", Boolean.class)).isFalse();
	}

	@Test
	void theEndpointsDeleteLiftsAPenalty() throws Exception {
		call("forgiven");
		call("forgiven");
		assertThat(call("forgiven").statusCode()).isEqualTo(429);
		HttpResponse<String> lifted = new Http(this.port).operator("DELETE", "/actuator/ratelimits/api/forgiven", null);
		assertThat(lifted.statusCode()).isEqualTo(204);
		assertThat(call("forgiven").statusCode()).isEqualTo(200);
	}

	private HttpResponse<String> call(String user) throws Exception {
		return HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/api/things"))
				.header("X-User", user)
				.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> get(String path) throws Exception {
		return new Http(this.port).get(path);
	}

}
