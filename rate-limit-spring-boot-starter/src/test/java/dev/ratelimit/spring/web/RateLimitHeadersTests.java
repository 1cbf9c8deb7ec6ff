package dev.ratelimit.spring.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletResponse;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate-limit headers for several limits, and their switches.
 */
class RateLimitHeadersTests {

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().build();

	@Test
	void namesEachLimitOfAPolicyWithSeveralByItsIndex() {
		RateLimitResult result = result(List.of(new KeyedLimit("api", "k", Limit.tokenBucket("100/1s")),
				new KeyedLimit("api", "k", Limit.fixedWindow("1000/1h")),
				new KeyedLimit("global", "g", Limit.slidingWindowCounter("3/1s"))));
		MockHttpServletResponse response = new MockHttpServletResponse();
		new RateLimitHeaders(true, true).write(response, result);
		assertThat(response.getHeader("RateLimit-Policy"))
			.isEqualTo("\"api[0]\";q=100;w=1, \"api[1]\";q=1000;w=3600, \"global\";q=3;w=1");
		assertThat(response.getHeader("RateLimit")).startsWith("\"global\";r=2;t=");
		assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("3");
	}

	@Test
	void writesOnlyTheLegacyHeadersWhenTheDraftHeadersAreOff() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		new RateLimitHeaders(false, true).write(response,
				result(List.of(new KeyedLimit("api", "k", Limit.tokenBucket("5/1s", 10)))));
		assertThat(response.getHeaderNames()).containsExactlyInAnyOrder("X-RateLimit-Limit", "X-RateLimit-Remaining",
				"X-RateLimit-Reset");
	}

	@Test
	void writesOnlyTheDraftHeadersWhenLegacyIsOff() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		new RateLimitHeaders(true, false).write(response,
				result(List.of(new KeyedLimit("api", "k", Limit.tokenBucket("5/1s", 10)))));
		assertThat(response.getHeaderNames()).containsExactlyInAnyOrder("RateLimit-Policy", "RateLimit");
	}

	@Test
	void writesNothingWhenNoLimitApplied() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		new RateLimitHeaders(true, true).write(response, RateLimitResult.unlimited());
		new RateLimitHeaders(true, true).write(response,
				new RateLimitResult(Decision.unavailable(true, 0), null, "free", 1, List.of("api")));
		assertThat(response.getHeaderNames()).isEmpty();
	}

	@Test
	void writesTheProblemAsJsonWithoutAJsonLibrary() {
		Decision rejected = this.limiter.acquire(new KeyedLimit("api", "x", Limit.tokenBucket("1/1s")), 2);
		String json = ProblemJson.write(RateLimitProblems.problem(rejected, null));
		assertThat(json).startsWith("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
			.contains("\"status\":429", "\"violated-policies\":[\"api\"]", "\"title\":\"Too Many Requests\"")
			.doesNotContain("retryAfter");
	}

	private RateLimitResult result(List<KeyedLimit> limits) {
		return new RateLimitResult(this.limiter.acquire(limits, 1), null, "free", 1, List.of());
	}

}
