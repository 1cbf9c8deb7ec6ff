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
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.LatencyProxy;
import dev.ratelimit.core.redis.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A slow, a hung and a gone Redis behind a TCP proxy, under threads calling a
 * {@link RedisRateLimiter} as fast as they can. Slow and hung are late (the connection is
 * up): calls are decided by this instance's limits, and after each late answer only one
 * call per cool-down waits for Redis, so callers do not pile up behind a slow Redis; gone
 * is down: the failure mode decides. How long decisions take is a figure of the
 * reliability campaign.
 */
class RedisSlowTest {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	private static final Duration COOL_DOWN = Duration.ofMillis(200);

	private static final KeyedLimit LIMIT = new KeyedLimit("api", "slow", Limit.tokenBucket("100000/1s"));

	private static RedisServer server;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		server.close();
	}

	@Test
	void aSlowRedisCostsOneWaitPerCoolDownAndNoCallGoesThroughUnlimited() throws Exception {
		try (LatencyProxy proxy = LatencyProxy.start(server.endpoint())) {
			LettuceConnectionFactory factory = proxy.endpoint().lettuce();
			AtomicInteger late = new AtomicInteger();
			try (RedisRateLimiter limiter = limiter(factory, FailureMode.ALLOW, late)) {
				assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
				proxy.latency(Duration.ofMillis(300));
				Hammered hammered = hammer(limiter, Duration.ofMillis(1000));
				assertThat(hammered.sources).containsExactly(Decision.Source.LOCAL_FALLBACK);
				// a first wave of one late call per thread, then one probe per cool-down
				// (counted against the time the
				// hammering really took, however slowly a loaded machine ran it)
				long coolDowns = hammered.elapsed.toNanos() / COOL_DOWN.toNanos() + 1;
				assertThat((long) late.get()).isBetween(1L, 8 + 2 * coolDowns);
				assertThat(hammered.calls).isGreaterThan(late.get() * 10);
				assertThat(limiter.isAvailable()).as("late is not down").isTrue();
				proxy.latency(Duration.ZERO);
				awaitBackend(limiter);
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void aHungRedisIsLateAndAGoneRedisIsDown() throws Exception {
		try (LatencyProxy proxy = LatencyProxy.start(server.endpoint())) {
			LettuceConnectionFactory factory = proxy.endpoint().lettuce();
			AtomicInteger failures = new AtomicInteger();
			try (RedisRateLimiter limiter = limiter(factory, FailureMode.ALLOW, failures)) {
				assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
				proxy.blackHole();
				Hammered hung = hammer(limiter, Duration.ofMillis(500));
				assertThat(hung.sources).containsExactly(Decision.Source.LOCAL_FALLBACK);
				assertThat(limiter.isAvailable()).isTrue();
				proxy.refuse();
				await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(() -> {
					limiter.acquire(LIMIT);
					return !limiter.isAvailable();
				});
				Hammered gone = hammer(limiter, Duration.ofMillis(300));
				assertThat(gone.sources).containsExactly(Decision.Source.FAILED_OPEN);
				proxy.forward();
				awaitBackend(limiter);
			}
			finally {
				factory.destroy();
			}
		}
	}

	private static RedisRateLimiter limiter(LettuceConnectionFactory factory, FailureMode mode,
			AtomicInteger failures) {
		return RedisRateLimiter.builder(factory)
			.keyPrefix("slow")
			.timeout(TIMEOUT)
			.coolDown(COOL_DOWN)
			.recoveryCheckInterval(Duration.ofMillis(50))
			.failureMode(mode)
			.failureListener((ex) -> failures.incrementAndGet())
			.build();
	}

	/**
	 * Calls from 8 threads until the time has passed.
	 */
	private static Hammered hammer(RedisRateLimiter limiter, Duration duration) throws Exception {
		Set<Decision.Source> sources = ConcurrentHashMap.newKeySet();
		AtomicLong calls = new AtomicLong();
		long start = System.nanoTime();
		long end = start + duration.toNanos();
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				running.add(threads.submit(() -> {
					while (System.nanoTime() < end) {
						sources.add(limiter.acquire(LIMIT).source());
						calls.incrementAndGet();
					}
				}));
			}
			for (Future<?> thread : running) {
				thread.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
		return new Hammered(sources, calls.get(), Duration.ofNanos(System.nanoTime() - start));
	}

	private static void awaitBackend(RedisRateLimiter limiter) {
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> limiter.acquire(LIMIT).source() == Decision.Source.BACKEND);
	}

	private record Hammered(Set<Decision.Source> sources, long calls, Duration elapsed) {
	}

}
