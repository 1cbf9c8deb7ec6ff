package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * What the caller's own troubles do to a {@link RedisRateLimiter}: none of them is a
 * Redis failure, and none leaves a permit taken in Redis that nobody releases. A call
 * that timed out withdraws the concurrency permit Redis takes when it runs the call late;
 * an interrupted caller is decided by this instance alone and sends nothing; a release
 * under an interrupt still releases every lease; an error thrown in the probe after a
 * late answer lets the next caller probe; a lease renewal made after waiting for another
 * thread's renewal gets the whole timeout for itself.
 */
class RedisCallerFailureTest {

	private static RedisServer server;

	private static LettuceConnectionFactory connectionFactory;

	private final AtomicInteger failures = new AtomicInteger();

	private final AtomicReference<Throwable> lastFailure = new AtomicReference<>();

	@BeforeAll
	static void startRedis() throws Exception {
		server = RedisServer.start();
		connectionFactory = server.endpoint().lettuce();
	}

	@AfterAll
	static void stopRedis() throws Exception {
		connectionFactory.destroy();
		server.close();
	}

	@Test
	void anInterruptedCallerIsDecidedHereAloneAndSendsNothing() {
		KeyedLimit pool = new KeyedLimit("pool", "interrupted", Limit.concurrency(1));
		try (RedisRateLimiter limiter = limiter(Duration.ofMillis(500)).build();
				RespClient redis = server.endpoint().client()) {
			awaitBackend(limiter, new KeyedLimit("warm", "interrupted", Limit.tokenBucket("1000/1s")));
			long scriptsBefore = scripts(redis);
			Thread.currentThread().interrupt();
			Decision interrupted;
			try {
				interrupted = limiter.acquire(pool);
			}
			finally {
				assertThat(Thread.interrupted()).as("the interrupt flag is kept").isTrue();
			}
			// never let through unlimited: this instance's own limits decide it
			assertThat(interrupted.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
			assertThat(this.failures).hasValue(0);
			assertThat(scripts(redis)).as("scripts run by Redis").isEqualTo(scriptsBefore);
			// Redis is still in use, and the interrupted call took nothing: the pool's
			// one permit is free
			Decision next = limiter.acquire(pool);
			assertThat(next.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(next.isAllowed()).isTrue();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "jedis" })
	void aConcurrencyPermitTakenByACallThatTimedOutIsWithdrawnOnceRedisRunsIt(String client) throws Exception {
		KeyedLimit pool = new KeyedLimit("pool", "timed-out-" + client, Limit.concurrency(1));
		RedisConnectionFactory factory = client.equals("jedis") ? server.endpoint().jedis() : connectionFactory;
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix("caller-failure")
			.timeout(Duration.ofMillis(100))
			.coolDown(Duration.ofMillis(200))
			.failureListener((ex) -> this.failures.incrementAndGet())
			.build(); RespClient redis = server.endpoint().client()) {
			awaitBackend(limiter, new KeyedLimit("warm", "timed-out-" + client, Limit.tokenBucket("1000/1s")));
			redis.command("CLIENT", "PAUSE", "400", "ALL");
			// Redis holds the call past its timeout, then runs it: the permit it takes is
			// nobody's
			assertThat(limiter.acquire(pool).source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
			assertThat(this.failures).hasValue(1);
			// once Redis answers again, the pool's one permit is free (not held for the
			// lease time, a minute)
			await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
				Decision again = limiter.acquire(pool);
				if (again.isAllowed()) {
					limiter.release(again);
				}
				assertThat(again.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(again.isAllowed()).isTrue();
			});
		}
		finally {
			if (factory instanceof JedisConnectionFactory jedis) {
				jedis.destroy();
			}
		}
	}

	@Test
	void aReleaseUnderAnInterruptStillReleasesEveryLease() {
		KeyedLimit perClient = new KeyedLimit("per-client", "released", Limit.concurrency(1));
		KeyedLimit global = new KeyedLimit("global", "released", Limit.concurrency(1));
		try (RedisRateLimiter limiter = limiter(Duration.ofMillis(500)).build()) {
			awaitBackend(limiter, new KeyedLimit("warm", "released", Limit.tokenBucket("1000/1s")));
			Decision held = limiter.acquire(List.of(perClient, global), 1);
			assertThat(held.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(held.leases()).hasSize(2);
			Thread.currentThread().interrupt();
			try {
				limiter.release(held);
			}
			finally {
				assertThat(Thread.interrupted()).as("the interrupt flag is kept").isTrue();
			}
			// both permits come back (a lease left behind would hold its permit for the
			// lease time, a minute)
			await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
				Decision again = limiter.acquire(List.of(perClient, global), 1);
				if (again.isAllowed()) {
					limiter.release(again);
				}
				assertThat(again.isAllowed()).isTrue();
			});
		}
	}

	@Test
	void anErrorThrownInTheProbeLetsTheNextCallerProbe() throws Exception {
		AtomicBoolean armed = new AtomicBoolean();
		TimeSource system = TimeSource.system();
		TimeSource failing = () -> {
			if (armed.get()) {
				throw new ProbeError();
			}
			return system.nowMicros();
		};
		KeyedLimit limit = new KeyedLimit("api", "probe", Limit.tokenBucket("1000/1s"));
		// no cool-down after a late answer: each call after it is a probe, unless another
		// probe is on its way
		try (RedisRateLimiter limiter = limiter(Duration.ofMillis(100)).coolDown(Duration.ZERO)
			.timeSource(failing)
			.build(); RespClient client = server.endpoint().client()) {
			awaitBackend(limiter, limit);
			client.command("CLIENT", "PAUSE", "300", "ALL");
			assertThat(limiter.acquire(limit).source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
			armed.set(true);
			// the next call probes, and fails; had it kept the probe, no call would ever
			// ask Redis again
			await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(() -> {
				try {
					limiter.acquire(limit);
					return false;
				}
				catch (ProbeError ex) {
					return true;
				}
			});
			armed.set(false);
			client.command("CLIENT", "UNPAUSE");
			awaitBackend(limiter, limit);
		}
	}

	@Test
	void aReservoirFillAfterWaitingForAnotherThreadsFillGetsTheWholeTimeout() throws Exception {
		Duration timeout = Duration.ofSeconds(3);
		KeyedLimit limit = new KeyedLimit("api", "leased", Limit.tokenBucket("100000/1s"));
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try (RedisRateLimiter limiter = limiter(timeout).reservoir(10).build();
				RespClient client = server.endpoint().client()) {
			awaitBackend(limiter, limit);
			PermitReservoirs.Reservoir reservoir = limiter.reservoir(limit);
			// this thread stands for another caller's fill: it starts one, and leaves no
			// permits
			reservoir.drain();
			PermitReservoirs.Claimed fill = (PermitReservoirs.Claimed) reservoir.step(limit, 1,
					TimeSource.system().nowMicros(), true);
			Future<Decision> waiting;
			long queued;
			try {
				waiting = executor.submit(() -> limiter.acquire(limit));
				await().atMost(Duration.ofSeconds(5)).until(() -> fill.done().getNumberOfDependents() > 0);
				queued = System.nanoTime();
				// 1.8 of its 3 seconds spent waiting for the fill, then Redis takes 1.5
				// seconds to answer its own fill
				await().atMost(Duration.ofSeconds(5))
					.pollInterval(Duration.ofMillis(10))
					.until(() -> System.nanoTime() - queued >= Duration.ofMillis(1800).toNanos());
				client.command("CLIENT", "PAUSE", "1500", "ALL");
			}
			finally {
				reservoir.end(limit, fill, 0, TimeSource.system().nowMicros());
			}
			Decision decision = waiting.get();
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(decision.isAllowed()).isTrue();
			assertThat(this.failures).hasValue(0);
		}
		finally {
			executor.shutdownNow();
		}
	}

	private static long scripts(RespClient redis) {
		String stats = redis.text("INFO", "commandstats");
		return RedisFunctionTest.calls(stats, "fcall") + RedisFunctionTest.calls(stats, "evalsha")
				+ RedisFunctionTest.calls(stats, "eval");
	}

	@Test
	void aFillAheadThatRedisAnswersLateIsReportedAndItsCallsAreServedMeanwhile() {
		KeyedLimit limit = new KeyedLimit("api", "ahead-late", Limit.tokenBucket("100000/1s"));
		try (RedisRateLimiter limiter = limiter(Duration.ofMillis(200)).reservoir(16).build();
				RespClient client = server.endpoint().client()) {
			awaitBackend(limiter, limit);
			PermitReservoirs.Reservoir reservoir = limiter.reservoir(limit);
			// a call finds another caller's fill on its way (this test's, by hand), as
			// the
			// callers of a busy key do; then it fills 16 itself and uses 1
			reservoir.drain();
			PermitReservoirs.Claimed other = (PermitReservoirs.Claimed) reservoir.step(limit, 1,
					TimeSource.system().nowMicros(), true);
			CompletableFuture<Decision> waiting = limiter.acquireAsync(List.of(limit), 1);
			reservoir.end(limit, other, 0, TimeSource.system().nowMicros());
			assertThat(waiting.join().source()).isEqualTo(Decision.Source.BACKEND);
			while (reservoir.permits() > 2) {
				assertThat(limiter.acquire(limit).source()).isEqualTo(Decision.Source.BACKEND);
			}
			// Redis holds every write: the call that leaves 1 is served at once, and the
			// fill it sends ahead times out
			client.command("CLIENT", "PAUSE", "2000", "WRITE");
			try {
				Decision served = limiter.acquire(limit);
				assertThat(served.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(served.isAllowed()).isTrue();
				await().atMost(Duration.ofSeconds(5)).until(() -> this.failures.get() == 1);
				// reported as what failed, as a call's failure is, not as the future's
				// wrapper
				assertThat(this.lastFailure.get()).isNotInstanceOf(CompletionException.class);
				// it took nothing: the last permit is still here, and the calls served
				assertThat(reservoir.permits()).isOne();
			}
			finally {
				client.command("CLIENT", "UNPAUSE");
			}
			// Redis answers again: fills go on
			for (int i = 0; i < 40; i++) {
				assertThat(limiter.acquire(limit).source()).isEqualTo(Decision.Source.BACKEND);
			}
		}
	}

	private RedisRateLimiter.Builder limiter(Duration timeout) {
		return RedisRateLimiter.builder(connectionFactory)
			.keyPrefix("caller-failure")
			.timeout(timeout)
			.failureListener((ex) -> {
				this.lastFailure.set(ex);
				this.failures.incrementAndGet();
			});
	}

	private void awaitBackend(RedisRateLimiter limiter, KeyedLimit limit) {
		await().atMost(Duration.ofSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> limiter.acquire(limit).source() == Decision.Source.BACKEND);
		// a cold JVM may take longer than the timeout to connect: those are not what the
		// tests count
		this.failures.set(0);
	}

	private static final class ProbeError extends Error {

		private static final long serialVersionUID = 1L;

	}

}
