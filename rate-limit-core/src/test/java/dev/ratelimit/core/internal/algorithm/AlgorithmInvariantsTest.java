package dev.ratelimit.core.internal.algorithm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Properties that hold for every limit and every sequence of calls, checked on random
 * limits and random traces (a fixed seed per run of each algorithm, so a failure
 * reproduces).
 */
class AlgorithmInvariantsTest {

	private static final int LIMITS_PER_ALGORITHM = 60;

	private static final int CALLS_PER_TRACE = 250;

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void allowedPermitsInAnyIntervalStayWithinBurstPlusRateTimesLength(Algorithm algorithm) {
		SplittableRandom random = new SplittableRandom(algorithm.ordinal() * 7919L);
		for (int n = 0; n < LIMITS_PER_ALGORITHM; n++) {
			Limit limit = randomLimit(algorithm, random);
			Trace trace = new Trace(limit);
			List<long[]> allowed = new ArrayList<>();
			long at = 0;
			for (int i = 0; i < CALLS_PER_TRACE; i++) {
				at += nextGap(random, limit);
				long cost = 1 + random.nextInt(3);
				if (trace.call(at, cost).allowed()) {
					allowed.add(new long[] { at, cost });
				}
			}
			// Buckets and the log: capacity + rate x length. Windows can pass their limit
			// on each side of a
			// boundary, so for them the burst is twice the limit (see
			// WindowAccuracyTest).
			long burst = switch (algorithm) {
				case FIXED_WINDOW, SLIDING_WINDOW_COUNTER -> 2 * limit.capacity();
				default -> limit.capacity();
			};
			long permits = limit.rate().permits();
			long period = limit.rate().periodMicros();
			for (int first = 0; first < allowed.size(); first++) {
				long sum = 0;
				for (int last = first; last < allowed.size(); last++) {
					sum += allowed.get(last)[1];
					long length = allowed.get(last)[0] - allowed.get(first)[0];
					// sum <= burst + permits * length / period, in integers
					assertThat(sum * period).as("%s: %d permits in %d us", limit, sum, length)
						.isLessThanOrEqualTo(burst * period + permits * length);
				}
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRejectedCallLeavesTheStateUnchanged(Algorithm algorithm) {
		SplittableRandom random = new SplittableRandom(algorithm.ordinal() * 104729L);
		for (int n = 0; n < LIMITS_PER_ALGORITHM; n++) {
			Limit limit = randomLimit(algorithm, random);
			// One trace sees every call; the other sees only the calls the first allowed.
			// Were a rejected call to
			// change anything, the two would answer some later call differently.
			Trace everything = new Trace(limit);
			Trace allowedOnly = new Trace(limit);
			long at = 0;
			for (int i = 0; i < CALLS_PER_TRACE; i++) {
				at += nextGap(random, limit);
				long cost = random.nextInt(10) == 0 ? limit.capacity() + 1 : 1 + random.nextInt(3);
				Outcome outcome = everything.call(at, cost);
				if (outcome.allowed()) {
					assertThat(allowedOnly.call(at, cost)).as("%s at %d", limit, at).isEqualTo(outcome);
				}
				else {
					assertThat(allowedOnly.peek(at, cost)).as("%s at %d", limit, at).isEqualTo(outcome);
				}
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void retryAfterIsExactAndResetAfterIsWhenTheLimitIsFull(Algorithm algorithm) {
		SplittableRandom random = new SplittableRandom(algorithm.ordinal() * 15485863L);
		int rejections = 0;
		for (int n = 0; n < LIMITS_PER_ALGORITHM; n++) {
			Limit limit = randomLimit(algorithm, random);
			Trace trace = new Trace(limit);
			long at = 0;
			for (int i = 0; i < CALLS_PER_TRACE; i++) {
				at += nextGap(random, limit);
				long cost = 1 + random.nextInt((int) Math.min(limit.capacity(), 3));
				Outcome outcome = trace.call(at, cost);
				String where = limit + " at " + at + " cost " + cost + ": " + outcome;
				if (!outcome.allowed()) {
					rejections++;
					long retryAt = at + outcome.retryAfterMicros();
					assertThat(outcome.retryAfterMicros()).as(where).isPositive();
					assertThat(trace.peek(retryAt, cost).allowed()).as("allowed at retry-after, " + where).isTrue();
					assertThat(trace.peek(retryAt - 1, cost).allowed()).as("rejected 1 us before, " + where).isFalse();
				}
				long resetAt = at + outcome.resetAfterMicros();
				assertThat(trace.peek(resetAt, 0).remaining()).as("full at reset-after, " + where)
					.isEqualTo(limit.capacity());
				if (outcome.resetAfterMicros() > 0) {
					assertThat(trace.peek(resetAt - 1, 0).remaining()).as("not full 1 us before reset, " + where)
						.isLessThan(limit.capacity());
				}
			}
		}
		assertThat(rejections).as("the traces must exercise rejections").isGreaterThan(1000);
	}

	private static long nextGap(SplittableRandom random, Limit limit) {
		long window = limit.windowMicros();
		return switch (random.nextInt(4)) {
			case 0 -> 0;
			case 1 -> random.nextLong(1, 10);
			case 2 -> random.nextLong(0, Math.max(1, window / 10));
			default -> random.nextLong(0, Math.max(1, window / 2));
		};
	}

	static Limit randomLimit(Algorithm algorithm, SplittableRandom random) {
		long permits = 1 + random.nextInt(20);
		long[] periods = { 1_000, 7_000, 100_000, 333_333, 1_000_000, 3_000_000, 60_000_000 };
		long period = periods[random.nextInt(periods.length)];
		String rate = permits + "/" + period + "us";
		Limit.Builder builder = Limit.builder(algorithm);
		switch (algorithm) {
			case TOKEN_BUCKET -> {
				long capacity = 1 + random.nextInt(30);
				builder.rate(rate)
					.capacity(capacity)
					.initial(random.nextBoolean() ? capacity : random.nextLong(0, capacity + 1));
			}
			case LEAKY_BUCKET -> {
				builder.rate(rate).capacity(1 + random.nextInt(30));
				if (random.nextBoolean()) {
					builder.mode(LeakMode.SHAPE);
					if (random.nextBoolean()) {
						builder.maxWait(Duration.ofNanos(1000 * random.nextLong(1, 2 * period)));
					}
				}
			}
			case CONCURRENCY -> builder.max(permits).leaseTime(Duration.ofNanos(1000 * period));
			default -> builder.rate(rate);
		}
		return builder.build();
	}

}
