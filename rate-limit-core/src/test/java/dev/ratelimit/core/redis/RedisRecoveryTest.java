package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * How a {@link RedisRateLimiter} comes back after Redis failed, and what its health check
 * tells. Calls come back to Redis as soon as it takes a write again, without waiting for
 * the client's own reconnection back-off (which grows to 30 s), and without any caller
 * waiting on a Redis that is down. The health check is a real write: a Redis that answers
 * but refuses writes (over {@code maxmemory} with {@code noeviction}, a replica) is down,
 * and stays down for calls until a write succeeds.
 */
class RedisRecoveryTest {

	private static final KeyedLimit LIMIT = new KeyedLimit("api", "recovery", Limit.tokenBucket("100000/1s"));

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void callsComeBackToARestartedRedisWithoutWaitingForTheClientsReconnectBackOff(FailureMode mode) {
		// Lettuce would reconnect on its own only after a minute: what brings calls back
		// is the limiter's check
		ClientResources slowReconnect = ClientResources.builder()
			.reconnectDelay(Delay.constant(Duration.ofMinutes(1)))
			.build();
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(server.endpoint().configuration(),
					LettuceClientConfiguration.builder().clientResources(slowReconnect).build());
			factory.afterPropertiesSet();
			factory.start();
			AtomicInteger failures = new AtomicInteger();
			try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
				.timeout(Duration.ofMillis(100))
				.failureMode(mode)
				.recoveryCheckInterval(Duration.ofMillis(50))
				.failureListener((ex) -> failures.incrementAndGet())
				.build()) {
				assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
				assertThat(limiter.acquire(LIMIT).source()).isEqualTo(Decision.Source.BACKEND);
				server.stop();
				await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(() -> {
					limiter.acquire(LIMIT);
					return !limiter.isAvailable();
				});
				Decision whileDown = limiter.acquire(LIMIT);
				assertThat(whileDown.source()).isEqualTo(switch (mode) {
					case ALLOW -> Decision.Source.FAILED_OPEN;
					case DENY -> Decision.Source.FAILED_CLOSED;
					case LOCAL -> Decision.Source.LOCAL_FALLBACK;
				});
				int failuresWhileDown = failures.get();
				for (int i = 0; i < 100; i++) {
					limiter.acquire(LIMIT);
				}
				assertThat(failures.get()).as("calls while down do not try Redis").isEqualTo(failuresWhileDown);
				server.restart();
				await().atMost(Duration.ofSeconds(10))
					.pollInterval(Duration.ofMillis(10))
					.until(() -> limiter.acquire(LIMIT).source() == Decision.Source.BACKEND);
				assertThat(limiter.isAvailable()).isTrue();
			}
			finally {
				factory.destroy();
				slowReconnect.shutdown();
			}
		}
	}

	@Test
	void aRedisOverItsMemoryLimitIsDownAndComesBackOnlyOnceItTakesWritesAgain() {
		try (RedisServer server = RedisServer.start(); RespClient admin = server.endpoint().client()) {
			LettuceConnectionFactory factory = server.endpoint().lettuce();
			try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
				.timeout(Duration.ofSeconds(1))
				.failureMode(FailureMode.DENY)
				.recoveryCheckInterval(Duration.ofMillis(50))
				.build()) {
				assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
				admin.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
				admin.command("CONFIG", "SET", "maxmemory", "1");
				// the server answers PING and runs scripts that only read, but refuses
				// every decision's write
				assertThat(admin.text("PING")).isEqualTo("PONG");
				assertThatExceptionOfType(DataAccessException.class).isThrownBy(limiter::ping)
					.havingRootCause()
					.withMessageContaining("OOM");
				assertThat(limiter.isAvailable()).isFalse();
				assertThat(limiter.acquire(LIMIT).source()).isEqualTo(Decision.Source.FAILED_CLOSED);
				// the background checks write too: while the server refuses writes, calls
				// stay with the failure mode
				for (int i = 0; i < 3; i++) {
					assertThatExceptionOfType(DataAccessException.class).isThrownBy(limiter::ping);
				}
				assertThat(limiter.acquire(LIMIT).source()).isEqualTo(Decision.Source.FAILED_CLOSED);
				admin.command("CONFIG", "SET", "maxmemory", "0");
				await().atMost(Duration.ofSeconds(5))
					.pollInterval(Duration.ofMillis(10))
					.until(() -> limiter.acquire(LIMIT).source() == Decision.Source.BACKEND);
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void aReplicaIsDownForTheLimiter() {
		try (RedisServer primary = RedisServer.start();
				RedisServer replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(primary.port()))) {
			LettuceConnectionFactory factory = replica.endpoint().lettuce();
			try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
				.timeout(Duration.ofSeconds(1))
				.failureMode(FailureMode.DENY)
				.build()) {
				assertThat(limiter.awaitReady(Duration.ofMillis(500))).isFalse();
				assertThatExceptionOfType(DataAccessException.class).isThrownBy(limiter::ping)
					.havingRootCause()
					.withMessageContaining("READONLY");
				assertThat(limiter.isAvailable()).isFalse();
				assertThat(limiter.acquire(LIMIT).source()).isEqualTo(Decision.Source.FAILED_CLOSED);
			}
			finally {
				factory.destroy();
			}
		}
	}

}
