package dev.ratelimit.core.memory;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A flood of distinct keys cannot grow the state past {@code max-keys}.
 */
class MemoryBoundTest {

	@Test
	void fiveMillionDistinctKeysKeepAtMostOneHundredThousandHeld() {
		ManualTimeSource clock = new ManualTimeSource();
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
			.maxKeys(100_000)
			.sweeper(Runnable::run)
			.timeSource(clock)
			.build();
		Limit limit = Limit.tokenBucket("60/1m");
		long peak = 0;
		for (int i = 0; i < 5_000_000; i++) {
			assertThat(limiter.acquire(new KeyedLimit("api", Integer.toString(i), limit)).isAllowed()).isTrue();
			if (i % 50_000 == 49_999) {
				limiter.cleanUp();
				peak = Math.max(peak, limiter.keyCount());
			}
		}
		limiter.cleanUp();
		assertThat(limiter.keyCount()).isLessThanOrEqualTo(100_000);
		assertThat(peak).isLessThanOrEqualTo(100_000).isGreaterThan(90_000);
	}

	@Test
	void aHotKeySurvivesAFloodOfOneOffKeys() {
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
			.maxKeys(1_000)
			.sweeper(Runnable::run)
			.timeSource(new ManualTimeSource())
			.build();
		Limit limit = Limit.tokenBucket("1000/1m");
		KeyedLimit hot = new KeyedLimit("api", "hot", limit);
		for (int i = 0; i < 200_000; i++) {
			limiter.acquire(hot);
			limiter.acquire(new KeyedLimit("api", "one-off-" + i, limit));
			limiter.acquire(new KeyedLimit("api", "one-off-b-" + i, limit));
		}
		// Had the hot key been evicted, it would have come back full and allowed far more
		// than 1000.
		assertThat(limiter.inspect(java.util.List.of(hot)).get(0).remaining()).isZero();
	}

}
