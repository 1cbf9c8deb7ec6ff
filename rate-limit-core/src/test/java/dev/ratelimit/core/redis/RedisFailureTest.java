package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis killed, hanging and restarted under a {@link RedisRateLimiter}: each failure mode
 * decides the calls, failures are counted, no call waits for a Redis that is down or,
 * during the cool-down, late, and decisions come from Redis again after a restart. How
 * long decisions take is a figure of the reliability campaign (docs/RELIABILITY.md).
 */
class RedisFailureTest {

	static final Duration TIMEOUT = Duration.ofMillis(100);

	private static final Duration COOL_DOWN = Duration.ofMillis(200);

	private static final KeyedLimit LIMIT = new KeyedLimit("api", "client", Limit.tokenBucket("100000/1s"));

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void appliesTheFailureModeWithinTheTimeoutAndRecoversAfterARestart(FailureMode mode) throws Exception {
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory connectionFactory = server.endpoint().lettuce();
			try {
				outageAndRecovery(server, connectionFactory, mode);
			}
			finally {
				connectionFactory.destroy();
			}
		}
	}

	static void outageAndRecovery(RedisServer server, RedisConnectionFactory connectionFactory, FailureMode mode)
			throws Exception {
		AtomicInteger failures = new AtomicInteger();
		RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.timeout(TIMEOUT)
			.coolDown(COOL_DOWN)
			.failureMode(mode)
			.failureListener((ex) -> failures.incrementAndGet())
			.build();
		try {
			assertThat(awaitBackend(limiter, Duration.ofSeconds(5))).isTrue();
			// a cold test JVM may take longer than the timeout to load and connect the
			// client
			failures.set(0);
			server.stop();
			Set<Decision.Source> sources = ConcurrentHashMap.newKeySet();
			AtomicInteger calls = new AtomicInteger();
			long end = System.nanoTime() + Duration.ofMillis(800).toNanos();
			ExecutorService executor = Executors.newFixedThreadPool(4);
			List<Future<?>> threads = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				threads.add(executor.submit(() -> {
					while (System.nanoTime() < end) {
						Decision decision = limiter.acquire(LIMIT);
						calls.incrementAndGet();
						sources.add(decision.source());
						if (mode == FailureMode.DENY) {
							assertThat(decision.isAllowed()).isFalse();
						}
						else if (mode == FailureMode.ALLOW) {
							assertThat(decision.isAllowed()).isTrue();
						}
						else {
							// decided by the local limiter: its own statuses, which may
							// reject
							assertThat(decision.statuses()).hasSize(1);
						}
					}
				}));
			}
			for (Future<?> thread : threads) {
				thread.get();
			}
			executor.shutdown();
			Decision.Source expected = switch (mode) {
				case ALLOW -> Decision.Source.FAILED_OPEN;
				case DENY -> Decision.Source.FAILED_CLOSED;
				case LOCAL -> Decision.Source.LOCAL_FALLBACK;
			};
			assertThat(sources).containsExactly(expected);
			assertThat(limiter.isAvailable()).isFalse();
			// Each failure starts a cool-down: a handful of probes, not one timeout per
			// call.
			assertThat(failures.get()).isBetween(1, 4 + (int) (800 / COOL_DOWN.toMillis()) * 2);
			assertThat(calls.get()).isGreaterThan(failures.get() * 10);
			server.restart();
			assertThat(awaitBackend(limiter, Duration.ofSeconds(8))).as("decisions from Redis after restart").isTrue();
			assertThat(limiter.isAvailable()).isTrue();
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void aHangingRedisCostsADecisionAtMostTheTimeoutAndNeverLetsCallsThroughUnlimited() throws Exception {
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory connectionFactory = server.endpoint().lettuce();
			AtomicInteger failures = new AtomicInteger();
			RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
				.timeout(TIMEOUT)
				.failureListener((ex) -> failures.incrementAndGet())
				.build();
			try (RespClient client = server.endpoint().client()) {
				assertThat(awaitBackend(limiter, Duration.ofSeconds(5))).isTrue();
				failures.set(0);
				client.command("CLIENT", "PAUSE", "1000", "ALL");
				Decision decision = limiter.acquire(LIMIT);
				// late, not gone (the connection is up): decided by this instance's
				// limits, not allowed unlimited
				assertThat(decision.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
				assertThat(failures).hasValue(1);
				// within the cool-down the next call does not wait for Redis (a wait
				// would end late, and be reported)
				assertThat(limiter.acquire(LIMIT).source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
				assertThat(failures).hasValue(1);
				client.command("CLIENT", "UNPAUSE");
				assertThat(awaitBackend(limiter, Duration.ofSeconds(5))).isTrue();
			}
			finally {
				limiter.close();
				connectionFactory.destroy();
			}
		}
	}

	/**
	 * Polls until a decision comes from Redis; polling (not sleeping a fixed time) waits
	 * for a real server.
	 */
	static boolean awaitBackend(RedisRateLimiter limiter, Duration timeout) {
		try {
			await().atMost(timeout)
				.pollInterval(Duration.ofMillis(20))
				.until(() -> limiter.acquire(LIMIT).source() == Decision.Source.BACKEND);
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

}
