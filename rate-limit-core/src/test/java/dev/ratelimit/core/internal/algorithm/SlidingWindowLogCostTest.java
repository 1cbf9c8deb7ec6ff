package dev.ratelimit.core.internal.algorithm;

import java.util.SplittableRandom;

import dev.ratelimit.core.Limit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The work of a sliding-window-log call does not grow with the log: it reads O(log n) of
 * the n entries held, allowed or rejected, however many have left the window, and the log
 * never holds more entries than its permits. Work is counted in entries read
 * ({@link LogState#reads}), never timed.
 */
class SlidingWindowLogCostTest {

	private static final SlidingWindowLog LOG = SlidingWindowLog.INSTANCE;

	/**
	 * The newest entry's time, then at most {@link SlidingWindowLog#TRIM_PER_CALL}
	 * dropped, then one added.
	 */
	private static final long APPLY_READS = 1 + SlidingWindowLog.TRIM_PER_CALL + 1 + 2;

	@ParameterizedTest(name = "{0} entries")
	@ValueSource(ints = { 1_000, 100_000 })
	void aCallOnAFullLogReadsTwoBinarySearchesOfEntriesAtMost(int entries) {
		// one permit a microsecond over a window of as many microseconds: full
		Limit limit = Limit.slidingWindowLog(entries + "/" + entries + "us");
		LogState state = filled(limit, entries);
		long newest = Trace.START + entries - 1;
		// two binary searches (the window's first entry, the entry whose leaving frees
		// enough) and five reads more
		long evaluateBound = 2 * (log2(entries) + 1) + 5;

		Outcome full = evaluate(limit, state, newest, 1, evaluateBound);
		assertThat(full.allowed()).isFalse();
		assertThat(full.retryAfterMicros()).isEqualTo(1);

		// 60% of the entries have left the window, none dropped yet: a rejection neither
		// walks through those nor
		// through the entries it would need gone (30% of the log)
		long later = newest + entries * 6L / 10;
		long cost = entries * 9L / 10;
		for (int i = 0; i < 100; i++) {
			Outcome rejected = evaluate(limit, state, later, cost, evaluateBound);
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.remaining()).isEqualTo(entries * 6L / 10);
			assertThat(rejected.retryAfterMicros()).isEqualTo(entries * 3L / 10);
		}

		Outcome allowed = evaluate(limit, state, later, 1, evaluateBound);
		assertThat(allowed.allowed()).isTrue();
		long before = state.reads;
		LOG.apply(limit, state, later, 1);
		assertThat(state.reads - before).as("entries read by apply").isLessThanOrEqualTo(APPLY_READS);
		assertThat(state.size()).isEqualTo(entries - SlidingWindowLog.TRIM_PER_CALL + 1);
	}

	@Test
	void callsAfterAWholeLogLeftTheWindowSeeItEmptyAndDropItEightEntriesAtATime() {
		Limit limit = Limit.slidingWindowLog("100000/100ms");
		LogState state = filled(limit, 100_000);
		long now = Trace.START + 1_000_000;
		for (int call = 1; call <= 10; call++) {
			Outcome outcome = evaluate(limit, state, now, 1, 2 * (log2(100_000) + 1) + 5);
			assertThat(outcome.allowed()).isTrue();
			assertThat(outcome.remaining()).isEqualTo(100_000 - call);
			long before = state.reads;
			LOG.apply(limit, state, now, 1);
			assertThat(state.reads - before).as("entries read by apply").isLessThanOrEqualTo(APPLY_READS);
			assertThat(state.size()).isEqualTo(100_000 - call * (SlidingWindowLog.TRIM_PER_CALL - 1));
			now++;
		}
	}

	@Test
	void theLogNeverHoldsMoreEntriesThanItsPermits() {
		SplittableRandom random = new SplittableRandom(42);
		for (int n = 0; n < 200; n++) {
			Limit limit = Limit.slidingWindowLog((1 + random.nextInt(50)) + "/" + (1 + random.nextInt(1000)) + "us");
			LogState state = LOG.fresh(limit, Trace.START);
			long now = Trace.START;
			for (int i = 0; i < 500; i++) {
				now += switch (random.nextInt(4)) {
					case 0 -> 0;
					case 1 -> 1;
					case 2 -> random.nextLong(limit.windowMicros() / 4 + 1);
					default -> random.nextLong(2 * limit.windowMicros() + 1);
				};
				long cost = (random.nextInt(4) == 0) ? random.nextLong(limit.capacity() + 1) : 1;
				if (LOG.evaluate(limit, state, now, cost).allowed()) {
					LOG.apply(limit, state, now, cost);
				}
				assertThat((long) state.size()).as("%s at step %d: %s", limit, i, state)
					.isLessThanOrEqualTo(limit.capacity());
			}
		}
	}

	@Test
	void runningTotalsThatWrapAroundDecideAsTotalsFromZero() {
		SplittableRandom random = new SplittableRandom(7);
		Limit limit = Limit.slidingWindowLog("20/1s");
		LogState fromZero = LOG.fresh(limit, Trace.START);
		LogState wrapping = LOG.fresh(limit, Trace.START);
		wrapping.before = LogState.TOTAL_MODULUS - 25;
		long now = Trace.START;
		for (int i = 0; i < 2_000; i++) {
			now += random.nextLong(100_000);
			long cost = random.nextLong(22);
			Outcome expected = LOG.evaluate(limit, fromZero, now, cost);
			assertThat(LOG.evaluate(limit, wrapping, now, cost)).as("call %d, %s", i, wrapping).isEqualTo(expected);
			if (expected.allowed()) {
				LOG.apply(limit, fromZero, now, cost);
				LOG.apply(limit, wrapping, now, cost);
			}
		}
		assertThat(wrapping.before).as("the running total went past the modulus")
			.isLessThan(LogState.TOTAL_MODULUS - 25);
	}

	/**
	 * Returns a log of {@code entries} entries of one permit each, one a microsecond from
	 * {@link Trace#START}.
	 */
	private static LogState filled(Limit limit, int entries) {
		LogState state = LOG.fresh(limit, Trace.START);
		for (int i = 0; i < entries; i++) {
			LOG.apply(limit, state, Trace.START + i, 1);
		}
		assertThat(state.size()).isEqualTo(entries);
		return state;
	}

	private static Outcome evaluate(Limit limit, LogState state, long now, long cost, long bound) {
		long before = state.reads;
		Outcome outcome = LOG.evaluate(limit, state, now, cost);
		assertThat(state.reads - before).as("entries read by a call of cost %d on a log of %d", cost, state.size())
			.isLessThanOrEqualTo(bound);
		return outcome;
	}

	/** Returns log2(n) rounded up. */
	private static long log2(int n) {
		return 32 - Integer.numberOfLeadingZeros(n - 1);
	}

}
