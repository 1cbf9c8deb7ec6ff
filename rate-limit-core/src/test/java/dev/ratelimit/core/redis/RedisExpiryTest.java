package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys expire once their state would be indistinguishable from a fresh one, with Redis's
 * own clock: idle clients leave nothing behind.
 */
@ExtendWith(RedisExtension.class)
class RedisExpiryTest {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect(RedisEndpoint redis) {
		connectionFactory = redis.lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void everyKeyExpiresWhenItsStateWouldBeFreshAgain(RedisEndpoint endpoint) {
		String prefix = TestRedis.uniquePrefix();
		RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(2))
			.build();
		List<KeyedLimit> limits = List.of(new KeyedLimit("tb", "c", Limit.tokenBucket("5/100ms")),
				new KeyedLimit("lb", "c", Limit.leakyBucket("5/100ms")),
				new KeyedLimit("fw", "c", Limit.fixedWindow("5/1h")),
				new KeyedLimit("swc", "c", Limit.slidingWindowCounter("5/100ms")),
				new KeyedLimit("swl", "c", Limit.slidingWindowLog("5/100ms")), new KeyedLimit("cc", "c",
						Limit.builder(Algorithm.CONCURRENCY).max(3).leaseTime(Duration.ofMillis(150)).build()));
		// Redis deletes a key when its PTTL runs out; what the limiter decides is that
		// PTTL. The largest value each
		// key may have right after a call that takes 2 permits, and the least it may
		// still have once the few
		// milliseconds this test takes to read it have passed:
		Map<String, long[]> expected = Map.of("tb", new long[] { 15, 40 }, // 2 permits
																			// refill in
																			// 40 ms, then
																			// the bucket
																			// is as good
																			// as fresh
				"lb", new long[] { 15, 40 }, // 2 units of water drain in 40 ms
				// until the current window ends (an hour long, so that it does not end
				// while this test reads)
				"fw", new long[] { 1, 3_600_000 }, "swc", new long[] { 75, 200 }, // until
																					// the
																					// window
																					// after
																					// the
																					// current
																					// one
																					// ends:
																					// the
																					// count
																					// still
																					// weighs
				"swl", new long[] { 75, 100 }, // until the entry leaves the window
				"cc", new long[] { 125, 150 }); // until the lease lapses
		try (RespClient client = endpoint.client()) {
			assertThat(limiter.acquire(limits, 2).isAllowed()).isTrue();
			List<?> keys = (List<?>) client.command("KEYS", prefix + ":*");
			assertThat(keys).hasSize(6);
			for (Object key : keys) {
				String name = (String) key;
				String policy = name.substring(name.indexOf('{') + 1, name.indexOf(':', name.indexOf('{')));
				long[] bounds = expected.get(policy);
				assertThat(client.number("PTTL", name)).as(name).isBetween(bounds[0], bounds[1]);
			}
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void aTokenBucketKeyLivesExactlyUntilTheBucketIsFull(RedisEndpoint endpoint) {
		String prefix = TestRedis.uniquePrefix();
		RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(2))
			.build();
		KeyedLimit hourly = new KeyedLimit("api", "c", Limit.tokenBucket("60/1h"));
		try (RespClient client = endpoint.client()) {
			limiter.acquire(hourly, 3);
			String key = (String) ((List<?>) client.command("KEYS", prefix + ":*")).get(0);
			// 3 tokens at one per minute: full again in 3 minutes
			assertThat(client.number("PTTL", key)).isBetween(179_000L, 180_000L);
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void callsThatTakeNothingLeaveNothing(RedisEndpoint endpoint) {
		String prefix = TestRedis.uniquePrefix();
		RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(2))
			.build();
		try (RespClient client = endpoint.client()) {
			KeyedLimit limit = new KeyedLimit("api", "c", Limit.tokenBucket("5/1s"));
			assertThat(limiter.acquire(limit, 0).isAllowed()).isTrue();
			assertThat(limiter.acquire(limit, 6).isAllowed()).isFalse();
			limiter.inspect(List.of(limit));
			assertThat((List<?>) client.command("KEYS", prefix + ":*")).isEmpty();
		}
		finally {
			limiter.close();
		}
	}

}
