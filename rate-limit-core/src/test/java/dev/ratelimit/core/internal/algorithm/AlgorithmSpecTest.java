package dev.ratelimit.core.internal.algorithm;

import java.time.Duration;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Table-driven specifications of every algorithm: each row is a call at an exact instant
 * and everything the algorithm must answer. Columns: microseconds from the start, cost,
 * verdict, remaining, retry-after, reset-after, [delay].
 */
class AlgorithmSpecTest {

	@ParameterizedTest(name = "{0}")
	@MethodSource("tokenBucket")
	void tokenBucket(String behaviour, Limit limit, String table) {
		new Trace(limit).runTable(table);
	}

	static Stream<Arguments> tokenBucket() {
		return Stream.of(
				arguments("a full bucket of 10 at 5/s lets a burst of 10 pass, then refills 5 a second",
						Limit.tokenBucket("5/1s", 10), """
								0 1 allow  9 0 200_000
								0 8 allow  1 0 1_800_000
								0 1 allow  0 0 2_000_000
								0 1 reject 0 200_000 2_000_000
								199_999 1 reject 0 1 1_800_001     # one microsecond short of a token
								200_000 1 allow 0 0 2_000_000      # exactly one token
								1_200_000 5 allow 0 0 2_000_000
								1_200_000 1 reject 0 200_000 2_000_000
								"""),
				arguments("refills continuously at a rate whose period does not divide evenly (3/s)",
						Limit.tokenBucket("3/1s"), """
								0 3 allow  0 0 1_000_000
								0 1 reject 0 333_334 1_000_000
								333_333 1 reject 0 1 666_667       # 999,999 of 1,000,000 units
								333_334 1 allow 0 0 1_000_000      # 1,000,002 units: one token and 2 units
								"""),
				arguments("a request may cost several tokens, and a cost above capacity can never pass",
						Limit.tokenBucket("10/1s"), """
								0 4 allow  6 0 400_000
								0 7 reject 6 100_000 400_000
								0 11 never 6 0 400_000
								0 6 allow  0 0 1_000_000
								"""),
				arguments("rates slower than one a second work (1/10s)", Limit.tokenBucket("1/10s"), """
						0 1 allow 0 0 10_000_000
						0 1 reject 0 10_000_000 10_000_000
						9_999_999 1 reject 0 1 1
						10_000_000 1 allow 0 0 10_000_000
						"""), arguments("a bucket that starts with 2 of 5 tokens",
						Limit.builder(Algorithm.TOKEN_BUCKET).rate("1/1s").capacity(5).initial(2).build(), """
								0 2 allow 0 0 5_000_000
								0 1 reject 0 1_000_000 5_000_000
								10_000_000 5 allow 0 0 5_000_000   # full after 5 s, never above capacity
								"""),
				arguments("a cost of zero asks without taking", Limit.tokenBucket("5/1s", 10), """
						0 0 allow 10 0 0
						0 10 allow 0 0 2_000_000
						0 0 allow 0 0 2_000_000
						"""));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("leakyBucket")
	void leakyBucket(String behaviour, Limit limit, String table) {
		new Trace(limit).runTable(table);
	}

	static Stream<Arguments> leakyBucket() {
		return Stream.of(arguments("policing rejects what does not fit in the bucket", Limit.leakyBucket("2/1s"), """
				0 1 allow 1 0 500_000
				0 1 allow 0 0 1_000_000
				0 1 reject 0 500_000 1_000_000
				250_000 1 reject 0 250_000 750_000
				500_000 1 allow 0 0 1_000_000
				500_000 3 never 0 0 1_000_000
				"""), arguments("shaping admits a burst with growing delays (100/s: one call every 10 ms)",
				Limit.builder(Algorithm.LEAKY_BUCKET).rate("100/1s").capacity(3).mode(LeakMode.SHAPE).build(), """
						0 1 allow 2 0 10_000 0
						0 1 allow 1 0 20_000 10_000
						0 1 allow 0 0 30_000 20_000
						0 1 reject 0 10_000 30_000
						15_000 1 allow 0 0 25_000 15_000
						"""),
				arguments("shaping rejects a call that would wait longer than max-wait", Limit
					.builder(Algorithm.LEAKY_BUCKET)
					.rate("100/1s")
					.mode(LeakMode.SHAPE)
					.maxWait(Duration.ofMillis(15))
					.build(), """
							0 1 allow 99 0 10_000 0
							0 1 allow 98 0 20_000 10_000
							0 1 reject 98 5_000 20_000     # would wait 20 ms
							0 0 allow 98 0 20_000 0        # a cost of 0 takes no place: it neither waits nor is refused
							5_000 1 allow 97 0 25_000 15_000
							"""));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("windows")
	void windows(String behaviour, Limit limit, String table) {
		new Trace(limit).runTable(table);
	}

	static Stream<Arguments> windows() {
		return Stream.of(
				arguments("a fixed window counts per window aligned to the epoch", Limit.fixedWindow("3/1s"), """
						0 2 allow 1 0 1_000_000
						500_000 1 allow 0 0 500_000
						600_000 1 reject 0 400_000 400_000
						999_999 1 reject 0 1 1
						1_000_000 3 allow 0 0 1_000_000
						1_000_000 4 never 0 0 1_000_000
						"""),
				arguments("a sliding window log forgets each permit one window after it was taken",
						Limit.slidingWindowLog("3/1s"), """
								0 1 allow 2 0 1_000_000
								100_000 1 allow 1 0 1_000_000
								200_000 1 allow 0 0 1_000_000
								300_000 1 reject 0 700_000 900_000
								300_000 2 reject 0 800_000 900_000   # needs the two oldest permits gone
								999_999 1 reject 0 1 200_001
								1_000_000 1 allow 0 0 1_000_000
								1_000_000 4 never 0 0 1_000_000
								"""),
				arguments("a sliding window counter weighs the previous window by the share still covered",
						Limit.slidingWindowCounter("10/1m"), """
								0 10 allow 0 0 120_000_000
								0 1 reject 0 66_000_000 120_000_000
								60_000_000 1 reject 0 6_000_000 60_000_000
								65_999_999 1 reject 0 1 54_000_001
								66_000_000 1 allow 0 0 114_000_000      # 10 x 54/60 = 9 weighted + 1 = 10
								90_000_000 4 allow 0 0 90_000_000       # 10 x 30/60 = 5 weighted + 1 + 4
								120_000_000 0 allow 5 0 60_000_000      # the next window: 5 weighted in full
								"""));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("concurrency")
	void concurrency(String behaviour, Limit limit, String table) {
		new Trace(limit).runTable(table);
	}

	static Stream<Arguments> concurrency() {
		return Stream.of(arguments("at most max calls in flight; unreleased leases expire",
				Limit.builder(Algorithm.CONCURRENCY).max(2).leaseTime(Duration.ofSeconds(10)).build(), """
						0 1 allow 1 0 10_000_000
						1_000_000 1 allow 0 0 10_000_000
						2_000_000 1 reject 0 8_000_000 9_000_000
						10_000_000 1 allow 0 0 10_000_000    # the first lease expired
						10_000_000 3 never 0 0 10_000_000
						"""));
	}

}
