package dev.ratelimit.core.redis;

import java.time.Duration;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link JedisScriptRunner}: with a Jedis factory for a standalone server, synchronous
 * decisions run as a Redis 7 function on connections of the runner's own, read on the
 * caller's thread, bounded by the timeout, and a paused or lost server is found again.
 */
class JedisScriptRunnerTest {

	private static RedisServer server;

	private static JedisConnectionFactory connectionFactory;

	@BeforeAll
	static void startRedis() throws Exception {
		server = RedisServer.start();
		connectionFactory = server.endpoint().jedis();
	}

	@AfterAll
	static void stopRedis() throws Exception {
		connectionFactory.destroy();
		server.close();
	}

	@Test
	void isTheRunnerOfAJedisFactoryForAStandaloneServer() {
		try (ScriptRunner runner = ScriptRunner.of(connectionFactory, DecideScript.load())) {
			assertThat(runner).isInstanceOf(JedisScriptRunner.class);
		}
	}

	@Test
	void decidesWithTheFunctionOnceItsLibraryIsLoaded() {
		KeyedLimit limit = new KeyedLimit("fcall", "client", Limit.tokenBucket("1000/1s"));
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.build(); RespClient redis = server.endpoint().client()) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
			// a connection of the runner's own opens in the background
			await().atMost(Duration.ofSeconds(10)).until(() -> {
				long before = RedisFunctionTest.calls(redis.text("INFO", "commandstats"), "fcall");
				limiter.acquire(limit);
				return RedisFunctionTest.calls(redis.text("INFO", "commandstats"), "fcall") == before + 1;
			});
			String before = redis.text("INFO", "commandstats");
			for (int i = 0; i < 10; i++) {
				assertThat(limiter.acquire(limit).source()).isEqualTo(Decision.Source.BACKEND);
			}
			String after = redis.text("INFO", "commandstats");
			assertThat(RedisFunctionTest.calls(after, "fcall") - RedisFunctionTest.calls(before, "fcall"))
				.isEqualTo(10);
			assertThat(RedisFunctionTest.calls(after, "evalsha")).isEqualTo(RedisFunctionTest.calls(before, "evalsha"));
		}
	}

	@Test
	void aCallThatRedisHoldsPastTheTimeoutIsDecidedByTheFailureModeAtTheTimeout() {
		KeyedLimit limit = new KeyedLimit("paused", "client", Limit.tokenBucket("1000/1s"));
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofMillis(100))
			.coolDown(Duration.ZERO)
			.failureMode(FailureMode.DENY)
			.build(); RespClient redis = server.endpoint().client()) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> limiter.acquire(limit).source() == Decision.Source.BACKEND);
			redis.command("CLIENT", "PAUSE", "2000", "ALL");
			long start = System.nanoTime();
			Decision held = limiter.acquire(limit);
			Duration waited = Duration.ofNanos(System.nanoTime() - start);
			assertThat(held.source()).isEqualTo(Decision.Source.FAILED_CLOSED);
			// the caller read with the timeout left, not Jedis's read timeout, nor until
			// Redis answers
			assertThat(waited).isLessThan(Duration.ofMillis(1500));
			redis.command("CLIENT", "UNPAUSE");
			// the connection whose reply came late is not reused: the next answer is the
			// next call's own
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				Decision again = limiter.acquire(limit);
				assertThat(again.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(again.isAllowed()).isTrue();
			});
		}
	}

}
