package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.TimeSource;
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
import static org.awaitility.Awaitility.await;

/**
 * Two-tier mode: taking {@code N} permits per Redis call into a reservoir cuts round
 * trips about {@code N} times, and a fleet of {@code I} instances over-admits by at most
 * {@code I * (N - 1)} beyond {@code capacity + rate * t}.
 */
@ExtendWith(RedisExtension.class)
class RedisReservoirTest {

	private static final int RESERVOIR = 10;

	private static final List<LettuceConnectionFactory> factories = new ArrayList<>();

	@BeforeAll
	static void connect(RedisEndpoint redis) {
		for (int i = 0; i < 4; i++) {
			factories.add(redis.lettuce());
		}
	}

	@AfterAll
	static void disconnect() {
		factories.forEach(LettuceConnectionFactory::destroy);
	}

	@Test
	void aReservoirCutsRoundTripsByAboutItsSize(RedisEndpoint endpoint) {
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("1000000/1h"));
		int decisions = 2000;
		long normal = roundTrips(endpoint, 0, limit, decisions);
		long leased = roundTrips(endpoint, RESERVOIR, limit, decisions);
		System.out.printf("round trips per decision: normal %.3f, reservoir %d: %.3f%n", (double) normal / decisions,
				RESERVOIR, (double) leased / decisions);
		assertThat(normal).isBetween((long) decisions, decisions + 2L);
		assertThat(leased).isBetween((long) decisions / RESERVOIR, decisions / RESERVOIR + 2L);
	}

	private long roundTrips(RedisEndpoint endpoint, int reservoir, KeyedLimit limit, int decisions) {
		RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.reservoir(reservoir)
			.build();
		try (RespClient client = endpoint.client()) {
			limiter.ping();
			client.command("CONFIG", "RESETSTAT");
			for (int i = 0; i < decisions; i++) {
				assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			}
			return scriptCalls(client.text("INFO", "commandstats"));
		}
		finally {
			limiter.close();
		}
	}

	/**
	 * Returns the scripts and functions Redis ran, by {@code INFO commandstats}.
	 */
	static long scriptCalls(String commandStats) {
		long calls = 0;
		for (String line : commandStats.split("\r?\n")) {
			if (line.startsWith("cmdstat_fcall:") || line.startsWith("cmdstat_evalsha:")
					|| line.startsWith("cmdstat_eval:")) {
				calls += Long.parseLong(line.replaceAll("^cmdstat_[a-z]+:calls=(\\d+),.*", "$1"));
			}
		}
		return calls;
	}

	@Test
	void aBusyReservoirLeftLowIsFilledAheadWithoutACallWaitingForIt(RedisEndpoint endpoint) {
		RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.reservoir(16)
			.build();
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1h"));
		try (RespClient client = endpoint.client()) {
			limiter.ping();
			client.command("CONFIG", "RESETSTAT");
			// a call finds another call's fill on its way (this test's, by hand), as the
			// callers of a busy key do
			PermitReservoirs.Reservoir reservoir = limiter.reservoir(limit);
			PermitReservoirs.Claimed other = (PermitReservoirs.Claimed) reservoir.step(limit, 1,
					TimeSource.system().nowMicros(), true);
			CompletableFuture<Decision> waiting = limiter.acquireAsync(List.of(limit), 1);
			assertThat(waiting).isNotDone();
			reservoir.end(limit, other, 0, TimeSource.system().nowMicros());
			// it fills 16 itself and uses 1; 13 more calls leave 2
			assertThat(waiting.join().isAllowed()).isTrue();
			for (int i = 0; i < 13; i++) {
				assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			}
			assertThat(reservoir.permits()).isEqualTo(2);
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isOne();
			// the next leaves 1, under an eighth of 16: it is answered at once, and a
			// fill
			// of 15 more is sent ahead
			Decision next = limiter.acquire(limit);
			assertThat(next.isAllowed()).isTrue();
			assertThat(next.source()).isEqualTo(Decision.Source.BACKEND);
			await().atMost(Duration.ofSeconds(5)).until(() -> reservoir.permits() == 16);
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isEqualTo(2);
			// Redis counted both fills: 31 taken, 15 of them held here after this call
			assertThat(limiter.acquire(limit).remaining()).isEqualTo(1000 - 31 + 15);
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void aClientOverItsLimitIsRefusedLocallyUntilRedisWouldAllowIt(RedisEndpoint endpoint) {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.reservoir(5)
			.timeSource(clock)
			.build();
		// capacity 10, one token every 100 ms
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("10/1s"));
		try (RespClient client = endpoint.client()) {
			for (int i = 0; i < 10; i++) {
				assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			}
			Decision refused = limiter.acquire(limit);
			assertThat(refused.isAllowed()).isFalse();
			assertThat(refused.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(100));
			client.command("CONFIG", "RESETSTAT");
			// callers queued on the exhausted key: Redis refused one permit for 100 ms,
			// so no call goes to it
			for (int i = 0; i < 50; i++) {
				Decision again = limiter.acquire(limit);
				assertThat(again.isAllowed()).isFalse();
				assertThat(again.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(again.retryAfter()).isEqualTo(Duration.ofMillis(100));
				assertThat(again.remaining()).isZero();
			}
			clock.advance(Duration.ofMillis(40));
			assertThat(limiter.acquire(limit).retryAfter()).isEqualTo(Duration.ofMillis(60));
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isZero();
			// a cost Redis was not asked about still goes to it, for its own retry-after
			assertThat(limiter.acquire(limit, 2).retryAfter()).isEqualTo(Duration.ofMillis(160));
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isOne();
			assertThat(limiter.acquire(limit, 2).retryAfter()).isEqualTo(Duration.ofMillis(160));
			assertThat(limiter.acquire(limit).retryAfter()).isEqualTo(Duration.ofMillis(60));
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isEqualTo(2);
			// once the refusal has run out, Redis decides again, and has a token
			clock.advance(Duration.ofMillis(60));
			assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isEqualTo(3);
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void aReservoirNeverServesACallUnderAChangedLimit(RedisEndpoint endpoint) {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.reservoir(RESERVOIR)
			.timeSource(clock)
			.build();
		KeyedLimit before = new KeyedLimit("api", "client", Limit.fixedWindow("20/1h"));
		// a reloaded configuration, or an override, lowers the limit of the same key
		KeyedLimit lowered = new KeyedLimit("api", "client", Limit.fixedWindow("5/1h"));
		try (RespClient client = endpoint.client()) {
			// 10 taken from Redis: 1 spent, 9 held here
			assertThat(limiter.acquire(before).remaining()).isEqualTo(19);
			client.command("CONFIG", "RESETSTAT");
			Decision refused = limiter.acquire(lowered);
			assertThat(refused.isAllowed()).isFalse();
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isOne();
			// the 9 were dropped, not kept for the limit they were taken under
			Decision again = limiter.acquire(before);
			assertThat(scriptCalls(client.text("INFO", "commandstats"))).isEqualTo(2);
			// the lowered window kept at most its 5 as spent; back under 20/1h, 10 more
			// are taken: 5 left in Redis and 9 held here
			assertThat(again.isAllowed()).isTrue();
			assertThat(again.remaining()).isEqualTo(14);
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void aFleetOverAdmitsAtMostThePermitsItsReservoirsHold() {
		ManualTimeSource clock = new ManualTimeSource();
		String prefix = TestRedis.uniquePrefix();
		List<RedisRateLimiter> fleet = factories.stream()
			.map((factory) -> RedisRateLimiter.builder(factory)
				.keyPrefix(prefix)
				.timeout(Duration.ofSeconds(2))
				.reservoir(RESERVOIR)
				.timeSource(clock)
				.build())
			.toList();
		// capacity 40, refill 40/s
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("40/1s"));
		try {
			// t=0: each instance takes 10 into its reservoir and uses 1: Redis is empty,
			// each holds 9
			for (RedisRateLimiter instance : fleet) {
				assertThat(instance.acquire(limit).isAllowed()).isTrue();
			}
			assertThat(fleet.get(0).inspect(List.of(limit)).get(0).remaining()).isZero();
			// t=0.9s: Redis has refilled 36; in one instant the fleet admits its 36 held
			// permits and 36 from Redis
			clock.advance(Duration.ofMillis(900));
			int burst = 0;
			for (RedisRateLimiter instance : fleet) {
				Decision decision;
				while ((decision = instance.acquire(limit)).isAllowed()) {
					assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
					burst++;
				}
			}
			int exact = 40;
			int bound = exact + fleet.size() * (RESERVOIR - 1);
			System.out.printf(
					"reservoir over-admission in one instant: %d admitted, exact bound (capacity) %d,"
							+ " over-admitted %d, stated bound I*(N-1) = %d%n",
					burst, exact, burst - exact, bound - exact);
			assertThat(burst).isEqualTo(72).isLessThanOrEqualTo(bound);
			// over the whole 0.9s the fleet took exactly capacity + rate * t = 40 + 36:
			// permits are moved, never made
			assertThat(fleet.size() + burst).isEqualTo(40 + 36);
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
	}

	@Test
	void aFleetInRealTimeStaysWithinTheBound() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		List<RedisRateLimiter> fleet = factories.stream()
			.map((factory) -> RedisRateLimiter.builder(factory)
				.keyPrefix(prefix)
				.timeout(Duration.ofSeconds(2))
				.reservoir(RESERVOIR)
				.build())
			.toList();
		// capacity 20, refill 200/s
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("200/1s", 20));
		try {
			for (RedisRateLimiter instance : fleet) {
				instance.ping();
			}
			long start = System.nanoTime();
			int attempts = 6000;
			int[] allowed = FleetSupport.hammer(fleet, 2, attempts, (attempt) -> List.of(limit), 1, (attempt) -> 0);
			double seconds = (System.nanoTime() - start) / 1e9;
			double exact = 20 + 200 * seconds;
			double bound = exact + fleet.size() * (RESERVOIR - 1);
			System.out.printf("reservoir fleet in real time: %d allowed in %.3fs, exact limit %.1f, bound %.1f%n",
					allowed[0], seconds, exact, bound);
			assertThat((double) allowed[0]).isLessThanOrEqualTo(bound);
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
	}

}
