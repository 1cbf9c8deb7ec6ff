package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link RedisRateLimiter#acquireAsync} and {@link RedisRateLimiter#releaseAsync} against
 * a real Redis: the same decisions as the calls that wait, a call that returns before
 * Redis has answered, the failure policy deciding once the timeout has passed or Redis is
 * gone, concurrency permits given back, and the reservoir of two-tier mode. Tests that
 * pause or stop Redis have a server of their own.
 */
class RedisAsyncTest {

	private static final Duration PATIENCE = Duration.ofSeconds(5);

	private static RedisServer server;

	private static LettuceConnectionFactory lettuce;

	private static JedisConnectionFactory jedis;

	private final List<Throwable> failures = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		lettuce = server.endpoint().lettuce();
		jedis = server.endpoint().jedis();
	}

	@AfterAll
	static void stopRedis() {
		lettuce.destroy();
		jedis.destroy();
		server.close();
	}

	private RedisRateLimiter.Builder limiter(RedisConnectionFactory factory, Duration timeout) {
		return RedisRateLimiter.builder(factory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(timeout)
			.failureListener(this.failures::add);
	}

	private static RedisConnectionFactory factory(String client) {
		return client.equals("jedis") ? jedis : lettuce;
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "jedis" })
	void workedExampleOneDecidesAsTheCallsThatWait(String client) throws Exception {
		ManualTimeSource clock = new ManualTimeSource();
		try (RedisRateLimiter redis = limiter(factory(client), Duration.ofSeconds(2)).timeSource(clock).build()) {
			KeyedLimit waiting = new KeyedLimit("geocode-burst", "waiting", Limit.tokenBucket("5/1s", 10));
			KeyedLimit asynchronous = new KeyedLimit("geocode-burst", "asynchronous", Limit.tokenBucket("5/1s", 10));
			List<String> atZero = answers(acquireAsync(redis, asynchronous, 12));
			assertThat(atZero).isEqualTo(answers(acquire(redis, waiting, 12)));
			assertThat(atZero).filteredOn((answer) -> answer.startsWith("allowed")).hasSize(10);
			assertThat(atZero.get(10)).isEqualTo("refused, 0 left, retry after PT0.2S");
			clock.advance(Duration.ofSeconds(1));
			List<String> atOne = answers(acquireAsync(redis, asynchronous, 6));
			assertThat(atOne).isEqualTo(answers(acquire(redis, waiting, 6)));
			assertThat(atOne).filteredOn((answer) -> answer.startsWith("allowed")).hasSize(5);
		}
	}

	@Test
	void aConcurrencyPermitTakenAsynchronouslyIsGivenBackByReleaseAsync() throws Exception {
		KeyedLimit pool = new KeyedLimit("uploads", "client", Limit.concurrency(1));
		try (RedisRateLimiter redis = limiter(lettuce, Duration.ofSeconds(2)).build()) {
			Decision held = redis.acquireAsync(List.of(pool), 1).get(5, TimeUnit.SECONDS);
			assertThat(held.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(held.leases()).hasSize(1);
			assertThat(redis.acquireAsync(List.of(pool), 1).get(5, TimeUnit.SECONDS).isAllowed()).isFalse();
			assertThat(redis.acquire(pool).isAllowed()).as("the call that waits sees it held too").isFalse();
			redis.releaseAsync(held).get(5, TimeUnit.SECONDS);
			Decision next = redis.acquireAsync(List.of(pool), 1).get(5, TimeUnit.SECONDS);
			assertThat(next.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(next.isAllowed()).as("the next call sees the permit back").isTrue();
			redis.releaseAsync(next).get(5, TimeUnit.SECONDS);
			assertThat(redis.acquire(pool).isAllowed()).isTrue();
			assertThat(this.failures).isEmpty();
		}
	}

	@Test
	void oneReservoirFillServesTheAsynchronousCallsThatCameWhileItWasOnItsWay() throws Exception {
		ManualTimeSource clock = new ManualTimeSource();
		// capacity 10; each fill takes at most 5
		KeyedLimit limit = new KeyedLimit("api", "reservoir", Limit.tokenBucket("10/1s"));
		try (RedisRateLimiter redis = limiter(lettuce, Duration.ofSeconds(2)).reservoir(5).timeSource(clock).build();
				RespClient client = server.endpoint().client()) {
			// the function library loaded, so that no call falls back to a second command
			assertThat(redis.awaitReady(PATIENCE)).isTrue();
			long scriptsBefore = scripts(client);
			// sent without waiting: the first fills, the others wait for its fill, on no
			// thread, and try again once it has been answered
			List<CompletableFuture<Decision>> burst = new ArrayList<>();
			for (int i = 0; i < 20; i++) {
				burst.add(redis.acquireAsync(List.of(limit), 1));
			}
			List<Decision> decisions = new ArrayList<>();
			for (CompletableFuture<Decision> decision : burst) {
				decisions.add(decision.get(5, TimeUnit.SECONDS));
			}
			assertThat(decisions).as("none decided here for want of the reservoir")
				.extracting(Decision::source)
				.containsOnly(Decision.Source.BACKEND);
			assertThat(decisions).filteredOn(Decision::isAllowed).hasSize(10);
			// two fills of 5, and one that Redis refused, whose refusal answers the rest
			assertThat(scripts(client) - scriptsBefore).isEqualTo(3);
			Decision refused = redis.acquireAsync(List.of(limit), 1).get(5, TimeUnit.SECONDS);
			assertThat(refused.isAllowed()).isFalse();
			assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(100));
			assertThat(this.failures).isEmpty();
		}
	}

	@Test
	void whileRedisAnswersLateACallWaitsForNobodyAndIsDecidedHereOnceTheTimeoutHasPassed() throws Exception {
		KeyedLimit limit = new KeyedLimit("api", "late", Limit.tokenBucket("6/1m"));
		try (RedisRateLimiter redis = limiter(lettuce, Duration.ofSeconds(1)).build();
				RespClient client = server.endpoint().client()) {
			assertThat(redis.awaitReady(PATIENCE)).isTrue();
			// a cold JVM may take longer than the timeout to connect
			this.failures.clear();
			client.command("CLIENT", "PAUSE", "4000", "ALL");
			try {
				CompletableFuture<Decision> late = redis.acquireAsync(List.of(limit), 1);
				assertThat(late).as("the caller did not wait for Redis").isNotDone();
				CompletableFuture<String> decidedOn = late.thenApply((decided) -> Thread.currentThread().getName());
				Decision decision = late.get(5, TimeUnit.SECONDS);
				assertThat(decidedOn.get()).as("decided off the timer's thread, once its deadline passed")
					.startsWith("ForkJoinPool.commonPool");
				// late, not gone: decided by this instance's own limits
				assertThat(decision.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
				assertThat(decision.isAllowed()).isTrue();
				assertThat(this.failures).singleElement().isInstanceOf(TimeoutException.class);
				assertThat(redis.isAvailable()).isTrue();
				// the cool-down: decided here at once
				CompletableFuture<Decision> cooling = redis.acquireAsync(List.of(limit), 1);
				assertThat(cooling).isCompleted();
				assertThat(cooling.get().source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
			}
			finally {
				client.command("CLIENT", "UNPAUSE");
			}
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "jedis" })
	void aConcurrencyPermitTakenByAnAsynchronousCallThatTimedOutIsWithdrawnOnceRedisRunsIt(String client)
			throws Exception {
		KeyedLimit pool = new KeyedLimit("pool", "timed-out", Limit.concurrency(1));
		try (RedisRateLimiter redis = limiter(factory(client), Duration.ofMillis(100)).coolDown(Duration.ofMillis(200))
			.build(); RespClient redisClient = server.endpoint().client()) {
			assertThat(redis.awaitReady(PATIENCE)).isTrue();
			this.failures.clear();
			redisClient.command("CLIENT", "PAUSE", "400", "ALL");
			// Redis holds the call past its timeout, then runs it: the permit it takes is
			// nobody's
			Decision timedOut = redis.acquireAsync(List.of(pool), 1).get(5, TimeUnit.SECONDS);
			assertThat(timedOut.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
			assertThat(this.failures).hasSize(1);
			redis.releaseAsync(timedOut).get(5, TimeUnit.SECONDS);
			// once Redis answers again, the pool's one permit is free (not held for the
			// lease time, a minute)
			await().atMost(PATIENCE).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
				Decision again = redis.acquireAsync(List.of(pool), 1).get(5, TimeUnit.SECONDS);
				redis.releaseAsync(again).get(5, TimeUnit.SECONDS);
				assertThat(again.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(again.isAllowed()).isTrue();
			});
		}
	}

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void withRedisStoppedTheFailureModeDecidesAndRedisDecidesAgainOnceRestarted(FailureMode mode) throws Exception {
		KeyedLimit limit = new KeyedLimit("api", "stopped", Limit.tokenBucket("100000/1s"));
		Decision.Source expected = switch (mode) {
			case ALLOW -> Decision.Source.FAILED_OPEN;
			case DENY -> Decision.Source.FAILED_CLOSED;
			case LOCAL -> Decision.Source.LOCAL_FALLBACK;
		};
		try (RedisServer stopped = RedisServer.start()) {
			LettuceConnectionFactory factory = stopped.endpoint().lettuce();
			try (RedisRateLimiter redis = limiter(factory, Duration.ofMillis(200)).failureMode(mode).build()) {
				assertThat(redis.awaitReady(PATIENCE)).isTrue();
				this.failures.clear();
				stopped.stop();
				Decision first = redis.acquireAsync(List.of(limit), 1).get(5, TimeUnit.SECONDS);
				assertThat(first.source()).isEqualTo(expected);
				assertThat(redis.isAvailable()).isFalse();
				assertThat(this.failures).hasSize(1);
				CompletableFuture<Decision> next = redis.acquireAsync(List.of(limit), 1);
				assertThat(next).as("no call waits for a Redis that is down").isCompleted();
				assertThat(next.get().source()).isEqualTo(expected);
				assertThat(next.get().isAllowed()).isEqualTo(mode != FailureMode.DENY);
				stopped.restart();
				await().atMost(Duration.ofSeconds(8))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> redis.acquireAsync(List.of(limit), 1)
						.get(5, TimeUnit.SECONDS)
						.source() == Decision.Source.BACKEND);
				assertThat(redis.isAvailable()).isTrue();
			}
			finally {
				factory.destroy();
			}
		}
	}

	private static List<Decision> acquireAsync(RedisRateLimiter redis, KeyedLimit limit, int calls) throws Exception {
		List<Decision> decisions = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			Decision decision = redis.acquireAsync(List.of(limit), 1).get(5, TimeUnit.SECONDS);
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			decisions.add(decision);
		}
		return decisions;
	}

	private static List<Decision> acquire(RedisRateLimiter redis, KeyedLimit limit, int calls) {
		List<Decision> decisions = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			decisions.add(redis.acquire(limit));
		}
		return decisions;
	}

	/**
	 * Returns what each decision tells its caller, without the key it was made for.
	 */
	private static List<String> answers(List<Decision> decisions) {
		return decisions.stream()
			.map((decision) -> (decision.isAllowed() ? "allowed" : "refused") + ", " + decision.remaining()
					+ " left, retry after " + decision.retryAfter())
			.toList();
	}

	private static long scripts(RespClient redis) {
		String stats = redis.text("INFO", "commandstats");
		return RedisFunctionTest.calls(stats, "fcall") + RedisFunctionTest.calls(stats, "evalsha")
				+ RedisFunctionTest.calls(stats, "eval");
	}

}
