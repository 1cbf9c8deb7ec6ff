package dev.ratelimit.core.memory;

import java.util.List;
import java.util.SplittableRandom;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@code tryAcquire}, whose token-bucket path has its own arithmetic, against
 * {@code acquire} as the oracle: two limiters on two clocks driven by the same random
 * trace must give the same verdict on every call and hold the same state (remaining and
 * reset-after, as {@code inspect} reads them) after it.
 */
class TryAcquireTest {

	static List<Limit> limits() {
		return List.of(Limit.tokenBucket("10/1s"),
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("3/1s").capacity(7).initial(2).build(),
				Limit.tokenBucket("1/10s"),
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("1000/1m").capacity(1500).build(),
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("7/3s").capacity(1).initial(0).build(),
				Limit.leakyBucket("5/1s"), Limit.fixedWindow("5/1s"), Limit.slidingWindowCounter("5/1s"),
				Limit.slidingWindowLog("5/1s"));
	}

	@ParameterizedTest
	@MethodSource("limits")
	void givesTheVerdictOfAcquireAndLeavesTheSameState(Limit limit) {
		ManualTimeSource boolClock = new ManualTimeSource();
		ManualTimeSource fullClock = new ManualTimeSource();
		InMemoryRateLimiter bool = InMemoryRateLimiter.builder().timeSource(boolClock).build();
		InMemoryRateLimiter full = InMemoryRateLimiter.builder().timeSource(fullClock).build();
		KeyedLimit key = new KeyedLimit("api", "client", limit);
		SplittableRandom random = new SplittableRandom(limit.hashCode());
		long period = limit.windowMicros();
		int allowed = 0;
		int rejected = 0;
		for (int step = 0; step < 3000; step++) {
			long advance = switch (random.nextInt(4)) {
				case 0 -> 0;
				case 1 -> random.nextLong(1, 1000);
				case 2 -> random.nextLong(1, Math.max(2, period / 10));
				default -> random.nextLong(1, period + 1);
			};
			boolClock.advanceMicros(advance);
			fullClock.advanceMicros(advance);
			long cost = (random.nextInt(20) == 0) ? limit.capacity() + 1 : random.nextLong(0, 3);
			boolean expected = full.acquire(List.of(key), cost).isAllowed();
			assertThat(bool.tryAcquire(key, cost)).as("step %d, cost %d", step, cost).isEqualTo(expected);
			if (expected) {
				allowed++;
			}
			else {
				rejected++;
			}
			LimitStatus boolState = bool.inspect(List.of(key)).get(0);
			LimitStatus fullState = full.inspect(List.of(key)).get(0);
			assertThat(boolState.remaining()).as("remaining after step %d", step).isEqualTo(fullState.remaining());
			assertThat(boolState.resetAfterMicros()).as("reset after step %d", step)
				.isEqualTo(fullState.resetAfterMicros());
		}
		// the trace exercises both verdicts
		assertThat(allowed).isGreaterThan(100);
		assertThat(rejected).isGreaterThan(100);
	}

	@Test
	void refusesAConcurrencyLimitWhoseLeaseItCouldNotHandOut() {
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(new ManualTimeSource()).build();
		KeyedLimit inFlight = new KeyedLimit("in-flight", "client", Limit.concurrency(2));
		assertThatIllegalArgumentException().isThrownBy(() -> limiter.tryAcquire(inFlight, 1))
			.withMessageContaining("in-flight");
	}

	@Test
	void refusesAShapingLeakyBucketWhoseDelayItCouldNotHandOut() {
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(new ManualTimeSource()).build();
		KeyedLimit shaped = new KeyedLimit("smooth", "client",
				Limit.builder(Algorithm.LEAKY_BUCKET).rate("100/1s").mode(LeakMode.SHAPE).build());
		assertThatIllegalArgumentException().isThrownBy(() -> limiter.tryAcquire(shaped, 1))
			.withMessageContaining("smooth")
			.withMessageContaining("delay");
		// nothing was poured: the first acquire still goes without waiting
		assertThat(limiter.acquire(shaped).delay()).isZero();
	}

}
