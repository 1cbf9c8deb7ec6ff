package dev.ratelimit.core.internal.algorithm;

import java.math.BigInteger;
import java.util.Random;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Limit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The math of taking a spent share over (docs/RUNTIME.md, "What carries over"): the share
 * of each algorithm at its edges, the permits it makes of another capacity, rounded up
 * and exact in integers below 2<sup>53</sup>, and a state that takes it over.
 */
class SpentShareTest {

	private static final long NOW = 1_700_000_000_000_000L;

	@ParameterizedTest(name = "{0} of {2} spent is {3} of {1}")
	@CsvSource({ "0, 1000, 60, 0", "60, 1000, 60, 1000", "45, 1000, 60, 750", "1, 1000, 60, 17", "59, 1000, 60, 984",
			"1, 7, 3, 3", "2, 5, 3, 4", "3, 10, 7, 5", "1, 1, 1000000, 1", "999999, 1, 1000000, 1", "0, 1, 1000000, 0",
			"7, 7, 7, 7" })
	void aShareIsThePermitsOfTheOtherCapacityRoundedUp(long spent, long capacity, long ofCapacity, long permits) {
		assertThat(new SpentShare(spent, ofCapacity, NOW).permitsOf(capacity)).isEqualTo(permits);
	}

	@Test
	void theShareIsExactWhereTheProductLeaves2To53() {
		long big = (1L << 53) - 1;
		assertThat(LimitAlgorithm.mulDivCeil(big, big, big)).isEqualTo(big);
		assertThat(LimitAlgorithm.mulDivCeil(big - 1, big, big)).isEqualTo(big - 1);
		assertThat(LimitAlgorithm.mulDivCeil(1, big, big)).isEqualTo(1);
		assertThat(LimitAlgorithm.mulDivCeil(3, big, 4)).isEqualTo(exact(3, big, 4));
		Random random = new Random(53);
		for (int i = 0; i < 100_000; i++) {
			long c = 1 + random.nextLong(big);
			long a = random.nextLong(c + 1);
			long b = 1 + ((i % 2 == 0) ? random.nextLong(big) : random.nextLong(1_000_000));
			assertThat(LimitAlgorithm.mulDivCeil(a, b, c)).as("%d * %d / %d", a, b, c).isEqualTo(exact(a, b, c));
		}
	}

	private static long exact(long a, long b, long c) {
		BigInteger[] division = BigInteger.valueOf(a)
			.multiply(BigInteger.valueOf(b))
			.divideAndRemainder(BigInteger.valueOf(c));
		return division[0].longValueExact() + (division[1].signum() > 0 ? 1 : 0);
	}

	static Stream<Limit> limits() {
		return Stream.of(Limit.tokenBucket("7/3s", 5),
				Limit.builder(Algorithm.LEAKY_BUCKET).rate("3/1s").capacity(7).build(), Limit.fixedWindow("7/1s"),
				Limit.slidingWindowCounter("7/1s"), Limit.slidingWindowLog("7/1s"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void aFreshStateSpendsNothingAndTakesEveryShareOver(Limit limit) {
		LimitAlgorithm<Object> algorithm = algorithm(limit);
		Object fresh = algorithm.fresh(limit, NOW);
		assertThat(algorithm.isUnspent(limit, fresh, NOW)).isTrue();
		assertThat(algorithm.spentShare(limit, fresh, NOW).spent()).isZero();
		for (long permits = 1; permits <= limit.capacity(); permits++) {
			Object state = algorithm.fresh(limit, NOW);
			algorithm.takeOver(limit, state, NOW, permits);
			assertThat(algorithm.isUnspent(limit, state, NOW)).isFalse();
			SpentShare share = algorithm.spentShare(limit, state, NOW);
			assertThat(share.spent()).as("%d taken over", permits).isEqualTo(permits);
			assertThat(share.capacity()).isEqualTo(limit.capacity());
			assertThat(share.until()).isGreaterThan(NOW);
			assertThat(algorithm.evaluate(limit, state, NOW, 0).remaining()).isEqualTo(limit.capacity() - permits);
			assertThat(algorithm.evaluate(limit, state, NOW, limit.capacity() - permits + 1).allowed()).isFalse();
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void aStateSpentToItsCapacityIsAWholeShareUntilItRecovers(Limit limit) {
		LimitAlgorithm<Object> algorithm = algorithm(limit);
		Object state = algorithm.fresh(limit, NOW);
		algorithm.apply(limit, state, NOW, limit.capacity());
		SpentShare share = algorithm.spentShare(limit, state, NOW);
		assertThat(share.spent()).isEqualTo(limit.capacity());
		assertThat(share.permitsOf(1000)).isEqualTo(1000);
		assertThat(algorithm.isUnspent(limit, state, NOW)).isFalse();
		// nothing is spent from the time the share says on, and something until then
		assertThat(algorithm.spentShare(limit, state, share.until() - 1).spent()).isPositive();
		assertThat(algorithm.spentShare(limit, state, share.until()).spent()).isZero();
		assertThat(algorithm.isUnspent(limit, state, share.until())).isTrue();
	}

	@Test
	void aBucketsPartOfAPermitCountsAsAWholeOne() {
		Limit limit = Limit.tokenBucket("3/1s");
		LimitAlgorithm<Object> algorithm = algorithm(limit);
		Object state = algorithm.fresh(limit, NOW);
		algorithm.apply(limit, state, NOW, 3);
		// 333,334 µs later the bucket holds one token and two units of the next
		SpentShare share = algorithm.spentShare(limit, state, NOW + 333_334);
		assertThat(share.spent()).isEqualTo(2);
		assertThat(algorithm.evaluate(limit, state, NOW + 333_334, 0).remaining()).isEqualTo(1);
	}

	@Test
	void aSlidingCountersWeightedCountIsRoundedUp() {
		Limit limit = Limit.slidingWindowCounter("10/1s");
		LimitAlgorithm<Object> algorithm = algorithm(limit);
		long start = NOW - Math.floorMod(NOW, 1_000_000L);
		Object state = algorithm.fresh(limit, start);
		algorithm.apply(limit, state, start, 3);
		// the next window, 0.4 s in: 3 x 0.6 = 1.8 still weighs, counted as 2
		SpentShare share = algorithm.spentShare(limit, state, start + 1_400_000);
		assertThat(share.spent()).isEqualTo(2);
		assertThat(share.until()).isEqualTo(start + 2_000_000);
	}

	@Test
	void aBucketThatStartsBelowCapacityTakesOverNoMoreThanItHolds() {
		Limit limit = Limit.builder(Algorithm.TOKEN_BUCKET).rate("10/1s").capacity(10).initial(2).build();
		LimitAlgorithm<Object> algorithm = algorithm(limit);
		Object state = algorithm.fresh(limit, NOW);
		assertThat(algorithm.isUnspent(limit, state, NOW)).isTrue();
		algorithm.takeOver(limit, state, NOW, 3);
		assertThat(algorithm.evaluate(limit, state, NOW, 0).remaining()).isEqualTo(2);
		state = algorithm.fresh(limit, NOW);
		algorithm.takeOver(limit, state, NOW, 9);
		assertThat(algorithm.evaluate(limit, state, NOW, 0).remaining()).isEqualTo(1);
	}

	@Test
	void aConcurrencyLimitHasNoShareAndTakesNoneOver() {
		Limit limit = Limit.concurrency(3);
		LimitAlgorithm<Object> algorithm = algorithm(limit);
		Object state = algorithm.fresh(limit, NOW);
		assertThat(algorithm.spentShare(limit, state, NOW)).isNull();
		assertThat(algorithm.isUnspent(limit, state, NOW)).isFalse();
	}

	@SuppressWarnings("unchecked")
	private static LimitAlgorithm<Object> algorithm(Limit limit) {
		return (LimitAlgorithm<Object>) LimitAlgorithm.of(limit);
	}

}
