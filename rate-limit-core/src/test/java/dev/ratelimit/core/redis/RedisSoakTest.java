package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.redis.testing.LatencyProxy;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The short form of the campaign's soak: callers holding concurrency permits through
 * repeated Redis faults (gone, then hung, through a proxy, so that Redis keeps its state)
 * leave nothing behind once they stop: no permit held in Redis beyond a lease time, no
 * extra connection, no extra thread. The ten-minute form is in the reliability campaign.
 */
class RedisSoakTest {

	/**
	 * A short lease time: a permit that a broken connection leaves taken in Redis lapses
	 * within the test.
	 */
	private static final Duration LEASE_TIME = Duration.ofSeconds(2);

	private static final KeyedLimit POOL = new KeyedLimit("pool", "soak",
			Limit.builder(Algorithm.CONCURRENCY).max(4).leaseTime(LEASE_TIME).build());

	private static final KeyedLimit BUCKET = new KeyedLimit("api", "soak", Limit.tokenBucket("100000/1s"));

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void repeatedFaultsLeakNoPermitConnectionOrThread(FailureMode mode) throws Exception {
		// faults through a proxy, so that Redis keeps its state: a permit taken and never
		// given back would show
		try (RedisServer server = RedisServer.start();
				RespClient admin = server.endpoint().client();
				LatencyProxy proxy = LatencyProxy.start(server.endpoint())) {
			LettuceConnectionFactory factory = proxy.endpoint().lettuce();
			try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
				.keyPrefix("soak")
				.timeout(Duration.ofMillis(100))
				.coolDown(Duration.ofMillis(100))
				.recoveryCheckInterval(Duration.ofMillis(50))
				.failureMode(mode)
				.build()) {
				assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
				long connectionsBefore = connections(admin);
				long lastThreadOfFirstCycle = 0;
				AtomicBoolean running = new AtomicBoolean(true);
				ExecutorService callers = Executors.newFixedThreadPool(4);
				List<Future<?>> work = new ArrayList<>();
				for (int t = 0; t < 4; t++) {
					work.add(callers.submit(() -> {
						while (running.get()) {
							Decision decision = limiter.acquire(List.of(POOL, BUCKET), 1);
							if (decision.isAllowed()) {
								limiter.release(decision);
							}
						}
					}));
				}
				for (int cycle = 0; cycle < 4; cycle++) {
					if (cycle % 2 == 0) {
						// gone: every connection closed, new ones refused
						proxy.refuse();
						await().atMost(Duration.ofSeconds(5)).until(() -> !limiter.isAvailable());
					}
					else {
						// hung: requests swallowed, no answer
						proxy.blackHole();
						await().atMost(Duration.ofSeconds(5))
							.until(() -> limiter.acquire(BUCKET).source() != Decision.Source.BACKEND);
					}
					proxy.forward();
					await().atMost(Duration.ofSeconds(10))
						.pollInterval(Duration.ofMillis(20))
						.until(() -> limiter.acquire(BUCKET).source() == Decision.Source.BACKEND);
					if (cycle == 0) {
						lastThreadOfFirstCycle = ownThreads().stream().mapToLong(Thread::getId).max().orElse(0);
					}
				}
				running.set(false);
				for (Future<?> caller : work) {
					caller.get();
				}
				callers.shutdown();
				assertThat(callers.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
				// A call whose answer a closed connection lost may have left its permit
				// taken in Redis: nobody renews
				// it, so it lapses within a lease time, and none stays beyond
				await().atMost(LEASE_TIME.multipliedBy(3)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
					LimitStatus pool = limiter.inspect(List.of(POOL)).get(0);
					assertThat(pool.remaining()).as("permits free in Redis").isEqualTo(4);
				});
				assertThat(connections(admin)).as("connections").isLessThanOrEqualTo(connectionsBefore);
				long since = lastThreadOfFirstCycle;
				assertThat(ownThreads()).as("threads started since the first cycle and still alive")
					.noneMatch((thread) -> thread.getId() > since);
			}
			finally {
				factory.destroy();
			}
		}
	}

	/**
	 * Returns the live threads, but those of Lettuce's and Netty's own pools (which grow
	 * to their configured size as connections come and go, never beyond), the JDK's
	 * reaper of each live child process, the test proxy's threads of each connection it
	 * carries, and Awaitility's, whose polling thread may outlive the await that started
	 * it for a moment.
	 */
	private static List<Thread> ownThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> !thread.getName().startsWith("lettuce-")
					&& !thread.getName().startsWith("globalEventExecutor")
					&& !thread.getName().startsWith("process reaper") && !thread.getName().startsWith("latency-proxy-")
					&& !thread.getName().startsWith("awaitility"))
			.toList();
	}

	private static long connections(RespClient admin) {
		return admin.text("CLIENT", "LIST").lines().filter((line) -> !line.contains("cmd=client|list")).count();
	}

}
