package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;

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
 * Keys expire once their state would be indistinguishable from a fresh one, with Redis's own clock: idle clients
 * leave nothing behind.
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
	void everyKeyIsGoneOnceItsTimeToFullHasPassed(RedisEndpoint endpoint) throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(2))
			.build();
		List<KeyedLimit> limits = List.of(new KeyedLimit("tb", "c", Limit.tokenBucket("5/100ms")),
				new KeyedLimit("lb", "c", Limit.leakyBucket("5/100ms")),
				new KeyedLimit("fw", "c", Limit.fixedWindow("5/100ms")),
				new KeyedLimit("swc", "c", Limit.slidingWindowCounter("5/100ms")),
				new KeyedLimit("swl", "c", Limit.slidingWindowLog("5/100ms")),
				new KeyedLimit("cc", "c",
						Limit.builder(Algorithm.CONCURRENCY).max(3).leaseTime(Duration.ofMillis(150)).build()));
		try (RespClient client = endpoint.client()) {
			long start = System.nanoTime();
			assertThat(limiter.acquire(limits, 2).isAllowed()).isTrue();
			List<?> keys = (List<?>) client.command("KEYS", prefix + ":*");
			assertThat(keys).hasSize(6);
			for (Object key : keys) {
				long ttl = client.number("PTTL", (String) key);
				// token bucket: 2 permits refill in 40ms; the sliding counter is kept two windows
				assertThat(ttl).as((String) key).isPositive().isLessThanOrEqualTo(201);
			}
			long deadline = start + Duration.ofSeconds(3).toNanos();
			while (!((List<?>) client.command("KEYS", prefix + ":*")).isEmpty() && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
			assertThat((List<?>) client.command("KEYS", prefix + ":*")).isEmpty();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
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
