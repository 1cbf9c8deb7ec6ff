package dev.ratelimit.core.docs;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The engine used directly, as docs/ALGORITHMS.md shows it (example {@code engine}): this
 * class holds the example's code, and checks that the doc still shows that code.
 */
class EngineExampleTest {

	@Test
	void theDocShowsThisCode() {
		assertThat(DocExamples.codeMissingFrom(EngineExampleTest.class, "docs/ALGORITHMS.md", "engine")).isEmpty();
	}

	@Test
	void throwsWithTheDecisionOnceABurstHasSpentTheBucket() {
		String apiKey = "demo-free";
		RateLimiter limiter = InMemoryRateLimiter.builder().maxKeys(1_000_000).build();
		KeyedLimit limit = new KeyedLimit("geocode-burst", apiKey, Limit.tokenBucket("5/1s", 10));

		Decision first = geocode(limiter, limit);
		assertThat(first.remaining()).isEqualTo(9);
		// on the system clock: at least the other nine of the capacity pass, then a call
		// throws, saying when to come back (a token every 200 ms)
		int allowed = 1;
		RateLimitExceededException rejection = null;
		while (rejection == null && allowed < 1_000) {
			rejection = catchThrowableOfType(RateLimitExceededException.class, () -> geocode(limiter, limit));
			if (rejection == null) {
				allowed++;
			}
		}
		assertThat(allowed).isGreaterThanOrEqualTo(10);
		assertThat(rejection).isNotNull();
		assertThat(rejection.getDecision().isAllowed()).isFalse();
		assertThat(rejection.getDecision().retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(200));
	}

	@Test
	void decidesSeveralLimitsOfOneCallTogetherAndARejectedCallConsumesNothing() {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = InMemoryRateLimiter.builder().timeSource(clock).build();
		KeyedLimit perClient = new KeyedLimit("api", "key:a", Limit.tokenBucket("5/1m"));
		KeyedLimit global = new KeyedLimit("backend-capacity", "global", Limit.tokenBucket("3/1m"));
		long cost = 2;

		assertThat(limiter.acquire(List.of(perClient, global), cost).isAllowed()).isTrue();
		assertThat(limiter.acquire(List.of(perClient, global), cost).isAllowed()).isFalse();
		// the rejected call took nothing from the per-client limit, which still has 3
		assertThat(limiter.acquire(perClient, 3).isAllowed()).isTrue();
	}

	private static Decision geocode(RateLimiter limiter, KeyedLimit limit) {
		Decision decision = limiter.acquire(limit); // cost 1
		if (!decision.isAllowed()) {
			throw new RateLimitExceededException(decision);
		}
		return decision;
	}

}
