package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend through Jedis (the blocking {@code RedisConnection} path): the same
 * decisions as memory, and the same bounded failure behaviour.
 */
class RedisJedisTest {

	private static JedisConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.standalone().jedis();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void tokenBucketDecidesExactlyAsMemory() {
		RedisDifferentialTest.replay(connectionFactory, Limit.tokenBucket("5/1s", 10), false, 42);
		RedisDifferentialTest.replay(connectionFactory, Limit.tokenBucket("1/10s"), true, 43);
	}

	@Test
	void concurrencyAndSlidingLogDecideExactlyAsMemory() {
		RedisDifferentialTest.replay(connectionFactory, Limit.concurrency(3), true, 44);
		RedisDifferentialTest.replay(connectionFactory, Limit.slidingWindowLog("3/250ms"), true, 45);
	}

	@Test
	void fourJedisInstancesShareOneQuotaExactly() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		List<JedisConnectionFactory> factories = List.of(connectionFactory, TestRedis.standalone().jedis(),
				TestRedis.standalone().jedis(), TestRedis.standalone().jedis());
		List<RedisRateLimiter> fleet = factories.stream()
			.map((factory) -> RedisRateLimiter.builder(factory)
				.keyPrefix(prefix)
				.timeout(Duration.ofSeconds(5))
				.build())
			.toList();
		try {
			KeyedLimit target = new KeyedLimit("shared", "one-key", Limit.tokenBucket("100/1h"));
			int[] allowed = FleetSupport.hammer(fleet, 2, 300, (attempt) -> List.of(target), 1, (attempt) -> 0);
			assertThat(allowed[0]).isEqualTo(100);
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
			factories.subList(1, 4).forEach(JedisConnectionFactory::destroy);
		}
	}

	@Test
	void failsWithinTheTimeoutAndRecovers() throws Exception {
		try (RedisServer server = RedisServer.start()) {
			JedisConnectionFactory jedis = server.endpoint().jedis();
			try {
				RedisFailureTest.outageAndRecovery(server, jedis, FailureMode.DENY);
			}
			finally {
				jedis.destroy();
			}
		}
	}

	@Test
	void releasesAConcurrencyPermit() {
		RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(TestRedis.uniquePrefix())
			.build();
		try {
			KeyedLimit limit = new KeyedLimit("p", "k", Limit.concurrency(1));
			Decision first = limiter.acquire(limit);
			assertThat(first.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(limiter.acquire(limit).isAllowed()).isFalse();
			limiter.release(first);
			assertThat(limiter.acquire(limit).isAllowed()).isTrue();
		}
		finally {
			limiter.close();
		}
	}

}
