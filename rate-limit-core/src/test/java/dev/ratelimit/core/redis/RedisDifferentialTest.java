package dev.ratelimit.core.redis;

import java.time.Duration;
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
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays random call sequences through the in-memory decision procedure
 * ({@link ReferenceLimiter}) and the Redis backend with the same controlled clock, and
 * requires identical decisions: allowed, remaining, retry-after, reset-after, delay and
 * exceeds-capacity of every limit, for every algorithm, with single and combined limits,
 * costs from 0 to above capacity, and concurrency releases.
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
		replay(connectionFactory, limit, false, limit.fingerprint().hashCode());
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void redisDecidesExactlyAsMemoryCombinedWithOtherLimits(Limit limit) {
		replay(connectionFactory, limit, true, 31 * limit.fingerprint().hashCode() + 7);
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
		Random random = new Random(seed);
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter memory = InMemoryRateLimiter.builder().timeSource(clock).build();
		RedisRateLimiter redis = redis(connectionFactory, clock);
		List<KeyedLimit> primary = List.of(new KeyedLimit("p", "alice", limit),
				new KeyedLimit("p", "bob{}\n\u00e9", limit));
		KeyedLimit other = new KeyedLimit("other", "alice", Limit.tokenBucket("4/1s", 6));
		KeyedLimit window = new KeyedLimit("global", "", Limit.slidingWindowCounter("12/1s"));
		long w = limit.windowMicros();
		List<Decision[]> held = new ArrayList<>();
		StringBuilder history = new StringBuilder();
		try {
			for (int step = 0; step < STEPS; step++) {
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
			}
		}
		finally {
			redis.close();
		}
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
