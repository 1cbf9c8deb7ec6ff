package dev.ratelimit.core.redis;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.WindowAlignment;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Replays random call sequences through the in-memory decision procedure
 * ({@link ReferenceLimiter}) and the Redis backend with the same controlled clock, and
 * requires identical decisions: allowed, remaining, retry-after, reset-after, delay and
 * exceeds-capacity of every limit, for every algorithm, with single and combined limits,
 * costs from 0 to above capacity, concurrency releases, refunds of earlier calls' permits
 * to some of their limits, and clients moving between two tiers whose limits differ in
 * algorithm (each taking the other's spent share over).
 */
class RedisDifferentialTest {

	private static final int STEPS = 400;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.standalone().lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	static Stream<Limit> limits() {
		return Stream.of(Limit.tokenBucket("5/1s", 10), Limit.tokenBucket("1/10s"), Limit.tokenBucket("7/300ms", 3),
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("3/1s").capacity(6).initial(1).build(),
				Limit.tokenBucket("1000/1m"), Limit.leakyBucket("5/1s"), Limit.leakyBucket("1/3s"),
				Limit.builder(Algorithm.LEAKY_BUCKET).rate("10/1s").capacity(5).mode(LeakMode.SHAPE).build(),
				Limit.builder(Algorithm.LEAKY_BUCKET)
					.rate("4/1s")
					.capacity(8)
					.mode(LeakMode.SHAPE)
					.maxWait(Duration.ofMillis(700))
					.build(),
				Limit.fixedWindow("5/1s"), Limit.fixedWindow("3/250ms"), Limit.fixedWindow("2/10s"),
				Limit.slidingWindowCounter("5/1s"), Limit.slidingWindowCounter("3/250ms"),
				Limit.slidingWindowCounter("10/1m"), Limit.slidingWindowLog("5/1s"), Limit.slidingWindowLog("3/250ms"),
				Limit.slidingWindowLog("20/10s"), Limit.slidingWindowLog("1000/100ms"), Limit.concurrency(3),
				Limit.builder(Algorithm.CONCURRENCY).max(5).leaseTime(Duration.ofMillis(500)).build());
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void redisDecidesExactlyAsMemoryAlone(Limit limit) {
		replay(connectionFactory, limit, false, limit.toString().hashCode());
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void redisDecidesExactlyAsMemoryCombinedWithOtherLimits(Limit limit) {
		replay(connectionFactory, limit, true, 31 * limit.toString().hashCode() + 7);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void redisDecidesExactlyAsMemoryForClientsMovingBetweenTiersOfOtherAlgorithms(Limit limit) {
		if (limit.algorithm() != Algorithm.CONCURRENCY) {
			replay(connectionFactory, limit, true, 17 * limit.toString().hashCode() + 3, true);
		}
	}

	/**
	 * Calendar windows, each with a time shortly before the boundaries it must cross: a
	 * month end, a leap day, both changes of daylight saving time in Paris, a Monday.
	 */
	static Stream<Arguments> calendarWindows() {
		return Stream.of(
				arguments(calendar("3/1mo", "Europe/Paris"),
						ZonedDateTime.parse("2027-01-31T22:00+01:00[Europe/Paris]")),
				arguments(calendar("5/1d", "UTC"), ZonedDateTime.parse("2028-02-28T20:00Z[UTC]")),
				arguments(calendar("4/1mo", "UTC"), ZonedDateTime.parse("2028-02-29T06:00Z[UTC]")),
				arguments(calendar("3/1d", "Europe/Paris"),
						ZonedDateTime.parse("2027-03-27T20:00+01:00[Europe/Paris]")),
				arguments(calendar("3/1d", "Europe/Paris"),
						ZonedDateTime.parse("2027-10-30T20:00+02:00[Europe/Paris]")),
				arguments(calendar("6/1w", "Europe/Paris"),
						ZonedDateTime.parse("2027-03-21T12:00+01:00[Europe/Paris]")));
	}

	@ParameterizedTest(name = "{0} from {1}")
	@MethodSource("calendarWindows")
	void redisDecidesCalendarWindowsExactlyAsMemory(Limit limit, ZonedDateTime from) {
		replay(connectionFactory, limit, false, from.hashCode(), micros(from), STEPS);
		replay(connectionFactory, limit, true, 31 * from.hashCode() + 7, micros(from), STEPS);
	}

	@ParameterizedTest(name = "{0} from {1}")
	@MethodSource("calendarWindows")
	void redisDecidesCalendarWindowsAsMemoryAtEveryBoundary(Limit limit, ZonedDateTime from) {
		ManualTimeSource clock = new ManualTimeSource(micros(from));
		RateLimiter memory = InMemoryRateLimiter.builder().timeSource(clock).build();
		RedisRateLimiter redis = redis(connectionFactory, clock);
		List<KeyedLimit> target = List.of(new KeyedLimit("p", "alice", limit));
		try {
			int boundaries = 0;
			long previousReset = -1;
			// every step lands on, or a microsecond either side of, the next boundary
			for (int step = 0; step < 3 * limit.capacity() + 12; step++) {
				Decision expected = memory.acquire(target, 1);
				Decision actual = redis.acquire(target, 1);
				String context = "step " + step + " at " + clock.nowMicros();
				assertSameStatuses(actual.statuses(), expected.statuses(), context);
				long untilBoundary = expected.statuses().get(0).resetAfterMicros();
				if (untilBoundary > previousReset) {
					boundaries++;
				}
				previousReset = untilBoundary;
				clock.advanceMicros(untilBoundary + (step % 3) - 1);
			}
			assertThat(boundaries).as("windows entered").isGreaterThan(3);
		}
		finally {
			redis.close();
		}
	}

	private static Limit calendar(String rate, String zone) {
		return Limit.builder(Algorithm.FIXED_WINDOW).rate(rate).align(WindowAlignment.CALENDAR).zone(zone).build();
	}

	private static long micros(ZonedDateTime time) {
		return time.toInstant().getEpochSecond() * 1_000_000L + time.toInstant().getNano() / 1000;
	}

	@Test
	void aRejectedCombinedCallTakesNothingFromAnyLimit() {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter redis = redis(connectionFactory, clock);
		KeyedLimit roomy = new KeyedLimit("a", "client", Limit.tokenBucket("10/1s"));
		KeyedLimit tight = new KeyedLimit("b", "client", Limit.fixedWindow("1/1s"));
		assertThat(redis.acquire(List.of(roomy, tight), 1).isAllowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			assertThat(redis.acquire(List.of(roomy, tight), 1).isAllowed()).isFalse();
		}
		assertThat(redis.inspect(List.of(roomy)).get(0).remaining()).isEqualTo(9);
		redis.close();
	}

	private static RedisRateLimiter redis(RedisConnectionFactory connectionFactory, ManualTimeSource clock) {
		return RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(5))
			.timeSource(clock)
			.build();
	}

	/**
	 * Replays a random sequence through the reference and a Redis limiter on the given
	 * connection factory.
	 */
	static void replay(RedisConnectionFactory connectionFactory, Limit limit, boolean combined, long seed) {
		replay(connectionFactory, limit, combined, seed, false);
	}

	private static void replay(RedisConnectionFactory connectionFactory, Limit limit, boolean combined, long seed,
			boolean tiers) {
		replay(connectionFactory, limit, combined, seed, new ManualTimeSource().nowMicros(), STEPS, tiers);
	}

	private static void replay(RedisConnectionFactory connectionFactory, Limit limit, boolean combined, long seed,
			long startMicros, int steps) {
		replay(connectionFactory, limit, combined, seed, startMicros, steps, false);
	}

	private static void replay(RedisConnectionFactory connectionFactory, Limit limit, boolean combined, long seed,
			long startMicros, int steps, boolean tiers) {
		Random random = new Random(seed);
		ManualTimeSource clock = new ManualTimeSource(startMicros);
		RateLimiter memory = InMemoryRateLimiter.builder().timeSource(clock).build();
		RedisRateLimiter redis = redis(connectionFactory, clock);
		List<KeyedLimit> primary = tiers ? tiers(limit)
				: List.of(new KeyedLimit("p", "alice", limit), new KeyedLimit("p", "bob{}\n\u00e9", limit));
		KeyedLimit other = new KeyedLimit("other", "alice", Limit.tokenBucket("4/1s", 6));
		KeyedLimit window = new KeyedLimit("global", "", Limit.slidingWindowCounter("12/1s"));
		long w = limit.windowMicros();
		List<Decision[]> held = new ArrayList<>();
		List<Refundable> refundable = new ArrayList<>();
		StringBuilder history = new StringBuilder();
		try {
			for (int step = 0; step < steps; step++) {
				int roll = random.nextInt(10);
				long advance = (roll < 3) ? 0 : (roll < 7) ? random.nextLong(w / 10 + 1)
						: (roll < 9) ? random.nextLong(w + 1) : random.nextLong(3 * w + 1);
				clock.advanceMicros(advance);
				if (!held.isEmpty() && random.nextInt(3) == 0) {
					Decision[] pair = held.remove(random.nextInt(held.size()));
					memory.release(pair[0]);
					redis.release(pair[1]);
					history.append(step).append(" release ").append(pair[1].leases()).append("\n");
					continue;
				}
				if (!refundable.isEmpty() && random.nextInt(6) == 0) {
					Refundable call = refundable.remove(random.nextInt(refundable.size()));
					List<KeyedLimit> back = call.limits.stream().filter((each) -> random.nextBoolean()).toList();
					memory.refund(call.expected, back, call.cost);
					redis.refund(call.actual, back, call.cost);
					history.append(step).append(" refund ").append(call.cost).append(" to ").append(back).append("\n");
					continue;
				}
				KeyedLimit target = primary.get(random.nextInt(primary.size()));
				List<KeyedLimit> limits = new ArrayList<>(List.of(target));
				if (combined) {
					switch (random.nextInt(4)) {
						case 0 -> limits.add(other);
						case 1 -> limits.add(0, window);
						case 2 -> {
							limits.add(other);
							limits.add(window);
						}
						default -> limits.add(target);
					}
				}
				long cost = (random.nextInt(8) == 0) ? random.nextLong(limit.capacity() + 2)
						: (random.nextInt(6) == 0) ? 0 : 1;
				String context = recent(history) + "step " + step + " at +" + advance + "us, cost " + cost + ", limits "
						+ limits;
				if (random.nextInt(10) == 0) {
					assertSameStatuses(redis.inspect(limits), memory.inspect(limits), "inspect " + context);
					continue;
				}
				Decision expected = memory.acquire(limits, cost);
				Decision actual = redis.acquire(limits, cost);
				assertThat(actual.source()).as(context).isEqualTo(Decision.Source.BACKEND);
				assertThat(actual.isAllowed()).as(context).isEqualTo(expected.isAllowed());
				assertThat(actual.retryAfterMicros()).as(context).isEqualTo(expected.retryAfterMicros());
				assertThat(actual.delay()).as(context).isEqualTo(expected.delay());
				assertThat(actual.remaining()).as(context).isEqualTo(expected.remaining());
				assertThat(actual.resetAfter()).as(context).isEqualTo(expected.resetAfter());
				assertThat(actual.leases()).as(context).hasSameSizeAs(expected.leases());
				assertSameStatuses(actual.statuses(), expected.statuses(), context);
				history.append(step)
					.append(" +")
					.append(advance)
					.append("us cost ")
					.append(cost)
					.append(" ")
					.append(summary(actual.statuses()))
					.append("\n");
				if (!actual.leases().isEmpty()) {
					held.add(new Decision[] { expected, actual });
				}
				else if (actual.isAllowed() && cost > 0) {
					refundable.add(new Refundable(expected, actual, List.copyOf(limits), cost));
					if (refundable.size() > 8) {
						refundable.remove(0);
					}
				}
			}
		}
		finally {
			redis.close();
		}
	}

	/**
	 * Two clients, each in one of two tiers: the limit, or a limit of another algorithm
	 * of about its window, each naming the other as its counterpart.
	 */
	private static List<KeyedLimit> tiers(Limit limit) {
		String rate = "4/" + Math.max(1, limit.windowMicros() / 1000) + "ms";
		Limit other = (limit.algorithm() == Algorithm.FIXED_WINDOW) ? Limit.tokenBucket(rate, 6)
				: Limit.fixedWindow(rate);
		List<KeyedLimit> tiers = new ArrayList<>();
		for (String client : List.of("alice", "bob{}\n\u00e9")) {
			tiers.add(new KeyedLimit("p", client, "first", limit, List.of(new KeyedLimit.Counterpart("first", other))));
			tiers.add(new KeyedLimit("p", client, "first", other, List.of(new KeyedLimit.Counterpart("first", limit))));
		}
		return tiers;
	}

	/**
	 * An allowed call whose permits a later step may give back.
	 */
	private record Refundable(Decision expected, Decision actual, List<KeyedLimit> limits, long cost) {
	}

	private static List<String> summary(List<LimitStatus> statuses) {
		return statuses.stream()
			.map((status) -> status.target().key().length() + ":" + status.allowed() + "/" + status.remaining() + "/"
					+ status.retryAfterMicros() + "/" + status.resetAfterMicros())
			.toList();
	}

	private static String recent(StringBuilder history) {
		String[] lines = history.toString().split("\n");
		return String.join("\n", List.of(lines).subList(Math.max(0, lines.length - 12), lines.length)) + "\n";
	}

	private static void assertSameStatuses(List<LimitStatus> actual, List<LimitStatus> expected, String context) {
		assertThat(actual).as(context).hasSameSizeAs(expected);
		for (int i = 0; i < actual.size(); i++) {
			assertThat(actual.get(i)).as(context + ", limit " + i).isEqualTo(expected.get(i));
		}
	}

}
