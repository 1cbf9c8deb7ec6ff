package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis that answers later than the timeout, while its connection is up, never lets
 * calls through unlimited: the late calls are decided by this instance's own limits,
 * which know what Redis allowed, and Redis still counts them. What makes answers late
 * here is {@code CLIENT PAUSE}; in production it is as often the instance itself, whose
 * busy CPU reads Redis's answers late. With {@code allow}, a limit of 6 per minute admits
 * 6 calls in all, whether the burst comes before Redis answered anything (a fresh
 * instance) or after the client spent its quota through Redis.
 */
class RedisLateAnswerTest {

	private static final Limit SIX_PER_MINUTE = Limit.tokenBucket("6/1m");

	private static RedisServer server;

	private static LettuceConnectionFactory connectionFactory;

	private final AtomicInteger failures = new AtomicInteger();

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		connectionFactory = server.endpoint().lettuce();
	}

	@AfterAll
	static void stopRedis() {
		connectionFactory.destroy();
		server.close();
	}

	@ParameterizedTest
	@EnumSource(value = FailureMode.class, names = { "ALLOW", "LOCAL" })
	void aBurstThatRedisAnswersLateAdmitsNoMoreThanTheLimitOnAWarmInstance(FailureMode mode) throws Exception {
		try (RedisRateLimiter limiter = limiter(mode, "warm-" + mode); RespClient redis = server.endpoint().client()) {
			KeyedLimit client = new KeyedLimit("api", "warm-" + mode, SIX_PER_MINUTE);
			assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
			int allowedByRedis = 0;
			for (int i = 0; i < 6; i++) {
				Decision decision = limiter.acquire(client);
				assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
				allowedByRedis += decision.isAllowed() ? 1 : 0;
			}
			assertThat(allowedByRedis).isEqualTo(6);
			redis.command("CLIENT", "PAUSE", "300", "WRITE");
			Map<Decision.Source, Integer> burst = burst(limiter, List.of(client), 60);
			assertThat(burst).doesNotContainKey(Decision.Source.FAILED_OPEN);
			assertThat(allowed(burst)).as("allowed during the burst").isZero();
			assertThat(this.failures.get()).as("late answers reported").isPositive();
			assertThat(admittedAfterwards(limiter, client)).isZero();
		}
	}

	@ParameterizedTest
	@EnumSource(value = FailureMode.class, names = { "ALLOW", "LOCAL" })
	void aFirstBurstThatRedisAnswersLateAdmitsNoMoreThanTheLimit(FailureMode mode) throws Exception {
		try (RedisRateLimiter limiter = limiter(mode, "fresh-" + mode); RespClient redis = server.endpoint().client()) {
			KeyedLimit client = new KeyedLimit("api", "fresh-" + mode, SIX_PER_MINUTE);
			assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
			redis.command("CLIENT", "PAUSE", "300", "WRITE");
			Map<Decision.Source, Integer> burst = burst(limiter, List.of(client), 60);
			assertThat(burst).doesNotContainKey(Decision.Source.FAILED_OPEN);
			assertThat(allowed(burst)).as("allowed during the burst").isEqualTo(6);
			// Redis ran the late calls once it answered again: they count there too
			assertThat(admittedAfterwards(limiter, client)).isZero();
		}
	}

	@ParameterizedTest
	@EnumSource(value = FailureMode.class, names = { "ALLOW", "LOCAL" })
	void manyClientsHalfwayThroughTheirQuotaGetOnlyTheRestWhileRedisAnswersLate(FailureMode mode) throws Exception {
		try (RedisRateLimiter limiter = limiter(mode, "many-" + mode); RespClient redis = server.endpoint().client()) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
			List<KeyedLimit> clients = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				KeyedLimit client = new KeyedLimit("api", "many-" + mode + "-" + i, SIX_PER_MINUTE);
				clients.add(client);
				for (int j = 0; j < 3; j++) {
					assertThat(limiter.acquire(client).isAllowed()).isTrue();
				}
			}
			redis.command("CLIENT", "PAUSE", "300", "WRITE");
			Map<Decision.Source, Integer> burst = burst(limiter, clients, 500);
			assertThat(burst).doesNotContainKey(Decision.Source.FAILED_OPEN);
			assertThat(allowed(burst)).as("allowed during the burst").isLessThanOrEqualTo(50 * 3);
			int afterwards = 0;
			for (KeyedLimit client : clients) {
				afterwards += admittedAfterwards(limiter, client);
			}
			assertThat(allowed(burst) + afterwards).as("allowed in all, beyond the 3 each spent before")
				.isLessThanOrEqualTo(50 * 3);
		}
	}

	@Test
	void aClientCommandTimeoutShorterThanTheLimitersIsLateTooNotDown() throws Exception {
		// Lettuce's own command timeout (spring.data.redis.timeout) ends the call before
		// the limiter's deadline
		LettuceConnectionFactory shortCommands = new LettuceConnectionFactory(server.endpoint().configuration(),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofMillis(50)).build());
		shortCommands.afterPropertiesSet();
		shortCommands.start();
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(shortCommands)
			.keyPrefix("late-command-timeout")
			.timeout(Duration.ofMillis(300))
			.coolDown(Duration.ofMillis(100))
			.build(); RespClient redis = server.endpoint().client()) {
			KeyedLimit client = new KeyedLimit("api", "spent", Limit.tokenBucket("1/1m"));
			assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
			assertThat(limiter.acquire(client).isAllowed()).isTrue();
			redis.command("CLIENT", "PAUSE", "500", "WRITE");
			Map<Decision.Source, Integer> burst = burst(limiter, List.of(client), 10);
			assertThat(burst).doesNotContainKey(Decision.Source.FAILED_OPEN);
			assertThat(allowed(burst)).isZero();
			assertThat(limiter.isAvailable()).isTrue();
		}
		finally {
			shortCommands.destroy();
		}
	}

	@Test
	void inTwoTierModeWhatTheReservoirServedCountsHereTooWhenRedisAnswersLate() throws Exception {
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix("late-lease")
			.timeout(Duration.ofMillis(100))
			.coolDown(Duration.ofMillis(100))
			.reservoir(3)
			.build(); RespClient redis = server.endpoint().client()) {
			KeyedLimit client = new KeyedLimit("api", "leased", SIX_PER_MINUTE);
			assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
			for (int i = 0; i < 6; i++) {
				assertThat(limiter.acquire(client).isAllowed()).isTrue();
			}
			redis.command("CLIENT", "PAUSE", "300", "WRITE");
			Map<Decision.Source, Integer> burst = burst(limiter, List.of(client), 20);
			assertThat(burst).doesNotContainKey(Decision.Source.FAILED_OPEN);
			assertThat(allowed(burst)).as("allowed beyond the 6 of the minute").isZero();
		}
	}

	@Test
	void whileRedisIsLateOnlyWhatThisInstanceAllowsIsSentSoAFloodingClientCannotCrowdOutTheOthers() throws Exception {
		try (RedisRateLimiter limiter = limiter(FailureMode.ALLOW, "crowd");
				RespClient redis = server.endpoint().client()) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
			KeyedLimit abuser = new KeyedLimit("api", "abuser", SIX_PER_MINUTE);
			KeyedLimit honest = new KeyedLimit("api", "honest", SIX_PER_MINUTE);
			redis.command("CLIENT", "PAUSE", "400", "WRITE");
			Map<Decision.Source, Integer> flood = burst(limiter, List.of(abuser), 1200);
			assertThat(allowed(flood)).isLessThanOrEqualTo(6);
			int honestAllowed = 0;
			for (int i = 0; i < 6; i++) {
				honestAllowed += limiter.acquire(honest).isAllowed() ? 1 : 0;
			}
			assertThat(honestAllowed + admittedAfterwards(limiter, honest)).as("the honest client's admissions")
				.isLessThanOrEqualTo(6);
			assertThat(admittedAfterwards(limiter, abuser)).isZero();
		}
	}

	@Test
	void aConcurrencyPermitHeldThroughRedisCountsHereWhileRedisAnswersLate() throws Exception {
		try (RedisRateLimiter limiter = limiter(FailureMode.ALLOW, "late-pool");
				RespClient redis = server.endpoint().client()) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(5))).isTrue();
			KeyedLimit pool = new KeyedLimit("pool", "client", Limit.concurrency(1));
			Decision held = limiter.acquire(pool);
			assertThat(held.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(held.isAllowed()).isTrue();
			redis.command("CLIENT", "PAUSE", "300", "WRITE");
			Map<Decision.Source, Integer> burst = burst(limiter, List.of(pool), 10);
			assertThat(burst).doesNotContainKey(Decision.Source.FAILED_OPEN);
			assertThat(allowed(burst)).as("a second permit while one is held").isZero();
			limiter.release(held);
			// released here too: a local decision now finds the permit free
			Decision after = limiter.acquire(pool);
			assertThat(after.isAllowed()).isTrue();
			limiter.release(after);
		}
	}

	private RedisRateLimiter limiter(FailureMode mode, String prefix) {
		return RedisRateLimiter.builder(connectionFactory)
			.keyPrefix("late-" + prefix)
			.timeout(Duration.ofMillis(100))
			.coolDown(Duration.ofMillis(100))
			.failureMode(mode)
			.failureListener((ex) -> this.failures.incrementAndGet())
			.build();
	}

	/**
	 * Makes {@code calls} calls from 8 threads, spread over the clients in turn, all
	 * started together.
	 * @return how many calls each source allowed (a source that only rejected maps to 0)
	 */
	private static Map<Decision.Source, Integer> burst(RedisRateLimiter limiter, List<KeyedLimit> clients, int calls)
			throws Exception {
		Map<Decision.Source, Integer> allowed = new ConcurrentHashMap<>();
		AtomicInteger next = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				running.add(threads.submit(() -> {
					start.await();
					for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
						Decision decision = limiter.acquire(clients.get(i % clients.size()));
						allowed.merge(decision.source(), decision.isAllowed() ? 1 : 0, Integer::sum);
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> thread : running) {
				thread.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
		return allowed;
	}

	private static int allowed(Map<Decision.Source, Integer> bySource) {
		return bySource.values().stream().mapToInt(Integer::intValue).sum();
	}

	/**
	 * Calls for the client until Redis decides a call again: how many of those calls were
	 * allowed, by whatever decided them.
	 */
	private static int admittedAfterwards(RedisRateLimiter limiter, KeyedLimit client) {
		AtomicInteger admitted = new AtomicInteger();
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> {
			Decision decision = limiter.acquire(client);
			admitted.addAndGet(decision.isAllowed() ? 1 : 0);
			return decision.source() == Decision.Source.BACKEND;
		});
		return admitted.get();
	}

}
