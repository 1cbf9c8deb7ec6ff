package dev.ratelimit.sample.geocoding.ratelimit;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.ratelimit.core.ManualTimeSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped limits of the sample, over real HTTP, with the limiter's clock under the
 * test's control (every test starts an hour after the previous one, so all buckets are
 * full again).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(GeocodingRateLimitTests.Clock.class)
class GeocodingRateLimitTests {

	@LocalServerPort
	private int port;

	@Autowired
	private ManualTimeSource clock;

	private SampleHttp http;

	@BeforeEach
	void anHourLater() {
		this.clock.advance(Duration.ofHours(1));
		this.http = new SampleHttp(this.port);
	}

	@Test
	void workedExampleTwelveGeocodeRequestsAtOnceLetTenPassAndFiveMoreASecondLater() {
		List<HttpResponse<String>> burst = send(12, () -> this.http.get("/api/geocode?q=Rabat", "demo-free"));
		assertThat(statuses(burst)).containsExactly(200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429, 429);
		HttpResponse<String> rejected = burst.get(10);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(rejected.body()).contains("\"status\":429")
			.contains("\"violated-policies\":[\"geocode-burst\"]")
			.contains("\"instance\":\"/api/geocode\"")
			.contains("\"retryAfter\":1");

		this.clock.advance(Duration.ofSeconds(1));
		List<HttpResponse<String>> later = send(6, () -> this.http.get("/api/geocode?q=Rabat", "demo-free"));
		assertThat(statuses(later)).containsExactly(200, 200, 200, 200, 200, 429);
	}

	@Test
	void theFreeTierAllowsSixtyRequestsAMinute() {
		List<HttpResponse<String>> responses = send(61, () -> this.http.get("/api/reverse?lat=34&lon=-6", "demo-free"));
		assertThat(statuses(responses).subList(0, 60)).containsOnly(200);
		assertThat(responses.get(60).statusCode()).isEqualTo(429);
		assertThat(responses.get(60).body()).contains("\"violated-policies\":[\"api\"]");
		assertThat(responses.get(60).headers().firstValue("Retry-After")).hasValue("1");
	}

	@Test
	void thePaidTierAllowsAThousandRequestsAMinute() {
		List<HttpResponse<String>> responses = send(100,
				() -> this.http.get("/api/reverse?lat=34&lon=-6", "demo-paid"));
		assertThat(statuses(responses)).containsOnly(200);
		assertThat(responses.get(99).headers().firstValue("X-RateLimit-Limit")).hasValue("200");
		assertThat(responses.get(99).headers().allValues("RateLimit-Policy").toString())
			.contains("\"api\";q=1000;w=60");
	}

	@Test
	void anonymousCallersGetTenRequestsAMinuteKeyedByAddress() {
		List<HttpResponse<String>> responses = send(11, () -> this.http.get("/api/reverse?lat=34&lon=-6", null));
		assertThat(statuses(responses).subList(0, 10)).containsOnly(200);
		assertThat(responses.get(10).statusCode()).isEqualTo(429);
		// Another caller's quota is its own.
		assertThat(this.http.get("/api/reverse?lat=34&lon=-6", "demo-free").statusCode()).isEqualTo(200);
	}

	@Test
	void aBatchCostsOnePermitPerQuery() {
		HttpResponse<String> first = this.http.post("/api/geocode/batch", "demo-free", batch(25));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"api\";r=35;"));
		assertThat(this.http.post("/api/geocode/batch", "demo-free", batch(36)).statusCode()).isEqualTo(429);
		assertThat(this.http.post("/api/geocode/batch", "demo-free", batch(35)).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/api/reverse?lat=34&lon=-6", "demo-free").statusCode()).isEqualTo(429);
	}

	@Test
	void aBadBatchIsAnsweredFourHundredNotRateLimited() {
		HttpResponse<String> response = this.http.post("/api/geocode/batch", "demo-free", batch(10_000));
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("\"parameter\":\"queries\"").contains("holds 10000");
	}

	@Test
	void aBatchBodyOverTheBoundIsAnswered413AndCostsOnePermit() {
		String huge = "[" + "\"a\",".repeat(70_000) + "\"a\"]";
		HttpResponse<String> response = this.http.post("/api/geocode/batch", "demo-free", huge);
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.body()).contains("\"title\":\"Request body too large\"");
		assertThat(response.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"api\";r=59;"));
		// the same body sent chunked, without a Content-Length, is refused while it is
		// read
		HttpResponse<String> chunked = this.http.postChunked("/api/geocode/batch", "demo-free", huge);
		assertThat(chunked.statusCode()).isEqualTo(413);
		assertThat(chunked.body()).contains("\"title\":\"Request body too large\"");
		assertThat(chunked.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"api\";r=58;"));
	}

	@Test
	void anUnknownApiKeyIsAnsweredWithAProblem401() {
		HttpResponse<String> response = this.http.get("/api/geocode?q=Rabat", "not-a-key");
		assertThat(response.statusCode()).isEqualTo(401);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"title\":\"Unknown API key\"");
	}

	@Test
	void everyLimitedResponseCarriesTheRateLimitHeaders() {
		HttpResponse<String> response = this.http.get("/api/geocode?q=Casablanca", "demo-free");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(String.join(", ", response.headers().allValues("RateLimit-Policy"))).contains("\"api\";q=60;w=60")
			.contains("\"backend-capacity\";q=200;w=1")
			.contains("\"geocode-burst\";q=10;w=2");
		assertThat(response.headers().firstValue("RateLimit")).hasValue("\"geocode-burst\";r=9;t=1");
		assertThat(response.headers().firstValue("X-RateLimit-Limit")).hasValue("10");
		assertThat(response.headers().firstValue("X-RateLimit-Remaining")).hasValue("9");
		assertThat(response.headers().firstValue("X-RateLimit-Reset")).hasValue("1");
	}

	private static String batch(int queries) {
		return IntStream.range(0, queries)
			.mapToObj((i) -> (i % 2 == 0) ? "\"Rabat\"" : "\"sao paulo\"")
			.collect(Collectors.joining(",", "[", "]"));
	}

	private static List<HttpResponse<String>> send(int count, java.util.function.Supplier<HttpResponse<String>> call) {
		List<HttpResponse<String>> responses = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			responses.add(call.get());
		}
		return responses;
	}

	private static List<Integer> statuses(List<HttpResponse<String>> responses) {
		return responses.stream().map(HttpResponse::statusCode).toList();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
