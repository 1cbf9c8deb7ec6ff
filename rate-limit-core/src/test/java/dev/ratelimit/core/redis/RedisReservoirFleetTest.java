package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
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

/**
 * Two-tier mode for every algorithm a reservoir serves, and for calls with several
 * limits: a fleet of {@value #INSTANCES} instances on one Redis, each with reservoirs of
 * {@value #RESERVOIR} permits, driven far over its limits on one clock, stays within the
 * bound stated for each algorithm (docs/REDIS.md), and asks Redis for a small part of its
 * decisions.
 * <ul>
 * <li>token bucket, policing leaky bucket: at most {@code capacity + rate * t + I * N} in
 * any interval of length {@code t};</li>
 * <li>fixed window: at most the limit in every window (a window's permits lapse at its
 * end), and at least the limit less {@code I * N} in a window the fleet wants more
 * of;</li>
 * <li>sliding window counter: the counter's own estimate over what the fleet admitted
 * never exceeds the limit;</li>
 * <li>sliding window log: at most {@code limit + I * N} in any window-long interval.</li>
 * </ul>
 */
@ExtendWith(RedisExtension.class)
class RedisReservoirFleetTest {

	private static final int INSTANCES = 3;

	private static final int RESERVOIR = 10;

	private static final long SECOND = 1_000_000;

	private static final List<LettuceConnectionFactory> factories = new ArrayList<>();

	@BeforeAll
	static void connect(RedisEndpoint redis) {
		for (int i = 0; i < INSTANCES; i++) {
			factories.add(redis.lettuce());
		}
	}

	@AfterAll
	static void disconnect() {
		factories.forEach(LettuceConnectionFactory::destroy);
	}

	@Test
	void tokenBucket(RedisEndpoint endpoint) {
		Run run = drive(endpoint, List.of(List.of(keyed("tb", Limit.tokenBucket("50/1s")))));
		assertBucketBound(run.admitted(0), 50, 50);
		run.assertFewRoundTrips();
	}

	@Test
	void policingLeakyBucket(RedisEndpoint endpoint) {
		Run run = drive(endpoint, List.of(List.of(keyed("lb", Limit.leakyBucket("50/1s")))));
		assertBucketBound(run.admitted(0), 50, 50);
		run.assertFewRoundTrips();
	}

	@Test
	void fixedWindow(RedisEndpoint endpoint) {
		Run run = drive(endpoint, List.of(List.of(keyed("fw", Limit.fixedWindow("50/1s")))));
		long[] perWindow = perWindow(run.admitted(0), run.start, run.end);
		System.out.printf("fixed window 50/1s, fleet admitted per window: %s%n", java.util.Arrays.toString(perWindow));
		for (int w = 1; w < perWindow.length - 1; w++) {
			assertThat(perWindow[w]).isBetween(50L - INSTANCES * RESERVOIR, 50L);
		}
		run.assertFewRoundTrips();
	}

	@Test
	void slidingWindowCounter(RedisEndpoint endpoint) {
		Run run = drive(endpoint, List.of(List.of(keyed("swc", Limit.slidingWindowCounter("50/1s")))));
		assertCounterEstimateWithinLimit(run.admitted(0), 50, SECOND);
		run.assertFewRoundTrips();
	}

	@Test
	void slidingWindowLog(RedisEndpoint endpoint) {
		Run run = drive(endpoint, List.of(List.of(keyed("swl", Limit.slidingWindowLog("50/1s")))));
		List<Long> admitted = run.admitted(0);
		int most = 0;
		for (int i = 0, j = 0; i < admitted.size(); i++) {
			while (admitted.get(i) - admitted.get(j) >= SECOND) {
				j++;
			}
			most = Math.max(most, i - j + 1);
		}
		System.out.printf("sliding log 50/1s: at most %d admitted in a window, bound %d%n", most,
				50 + INSTANCES * RESERVOIR);
		assertThat(most).isLessThanOrEqualTo(50 + INSTANCES * RESERVOIR);
		run.assertFewRoundTrips();
	}

	/**
	 * The sample's ordinary request: its client's tier, the global capacity window and
	 * the client's burst bucket, for several clients; every limit holds its own bound.
	 */
	@Test
	void aCallWithSeveralLimitsHoldsEachLimitsBound(RedisEndpoint endpoint) {
		Limit tier = Limit.tokenBucket("600/1m");
		// the global window binds before the clients' bursts do (4 x 140 in 5 s)
		Limit global = Limit.slidingWindowCounter("80/1s");
		Limit burst = Limit.tokenBucket("20/1s", 40);
		List<List<KeyedLimit>> calls = new ArrayList<>();
		for (int client = 0; client < 4; client++) {
			calls.add(List.of(new KeyedLimit("api", "client-" + client, tier),
					new KeyedLimit("capacity", "global", global), new KeyedLimit("burst", "client-" + client, burst)));
		}
		Run run = drive(endpoint, calls);
		List<Long> all = new ArrayList<>();
		for (int client = 0; client < calls.size(); client++) {
			List<Long> admitted = run.admitted(client);
			assertBucketBound(admitted, 600, 10);
			assertBucketBound(admitted, 40, 20);
			all.addAll(admitted);
		}
		all.sort(null);
		assertCounterEstimateWithinLimit(all, 80, SECOND);
		run.assertFewRoundTrips();
	}

	/**
	 * Within its limits, the sample's ordinary request is decided locally but for one
	 * fill of all three reservoirs in one script call per {@value #RESERVOIR} calls.
	 */
	@Test
	void aCallWithSeveralLimitsWithinThemAsksRedisOncePerReservoir(RedisEndpoint endpoint) {
		List<KeyedLimit> call = List.of(new KeyedLimit("api", "client", Limit.tokenBucket("1000000/1m")),
				new KeyedLimit("capacity", "global", Limit.slidingWindowCounter("1000000/1s")),
				new KeyedLimit("burst", "client", Limit.tokenBucket("1000000/1s")));
		RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(5))
			.reservoir(RESERVOIR)
			.build();
		int decisions = 2000;
		try (RespClient client = endpoint.client()) {
			limiter.ping();
			client.command("CONFIG", "RESETSTAT");
			// a second's boundary ends the window that the global limit's permits were
			// counted in: the reservoir's leftovers lapse, and the next call fills again
			long started = System.currentTimeMillis() - 5;
			for (int i = 0; i < decisions; i++) {
				// half of them asynchronously, through the same reservoirs
				Decision decision = (i % 2 == 0) ? limiter.acquire(call, 1) : limiter.acquireAsync(call, 1).join();
				assertThat(decision.isAllowed()).isTrue();
				assertThat(decision.statuses()).extracting(LimitStatus::target).containsExactlyElementsOf(call);
			}
			long roundTrips = RedisReservoirTest.scriptCalls(client.text("INFO", "commandstats"));
			System.out.printf("three limits within them: %.3f round trips per decision%n",
					(double) roundTrips / decisions);
			long boundaries = (System.currentTimeMillis() + 5) / 1000 - started / 1000;
			assertThat(roundTrips).isBetween((long) decisions / RESERVOIR, decisions / RESERVOIR + 2L + 2 * boundaries);
		}
		finally {
			limiter.close();
		}
	}

	private static KeyedLimit keyed(String policy, Limit limit) {
		return new KeyedLimit(policy, "client", limit);
	}

	/**
	 * Drives the fleet for 5 s of its clock: every 1 to 20 ms, each instance makes 0 to 9
	 * calls, each a call picked at random; all far more than the limits allow.
	 */
	private Run drive(RedisEndpoint endpoint, List<List<KeyedLimit>> calls) {
		ManualTimeSource clock = new ManualTimeSource();
		String prefix = TestRedis.uniquePrefix();
		List<RedisRateLimiter> fleet = factories.stream()
			.map((factory) -> RedisRateLimiter.builder(factory)
				.keyPrefix(prefix)
				.timeout(Duration.ofSeconds(5))
				.reservoir(RESERVOIR)
				.timeSource(clock)
				.build())
			.toList();
		Random random = new Random(42);
		Run run = new Run(calls.size(), clock.nowMicros());
		try (RespClient client = endpoint.client()) {
			client.command("CONFIG", "RESETSTAT");
			long end = clock.nowMicros() + 5 * SECOND;
			while (clock.nowMicros() < end) {
				for (RedisRateLimiter instance : fleet) {
					int burst = random.nextInt(10);
					for (int i = 0; i < burst; i++) {
						int picked = random.nextInt(calls.size());
						Decision decision = instance.acquire(calls.get(picked), 1);
						assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
						run.decisions++;
						if (decision.isAllowed()) {
							run.admitted.get(picked).add(clock.nowMicros());
						}
						else {
							assertThat(decision.statuses()).anyMatch((status) -> !status.allowed());
							assertThat(decision.statuses()).filteredOn((status) -> !status.allowed())
								.extracting(LimitStatus::retryAfterMicros)
								.allMatch((retry) -> retry > 0);
						}
					}
				}
				clock.advance(Duration.ofMillis(1 + random.nextInt(20)));
			}
			run.end = clock.nowMicros();
			run.roundTrips = RedisReservoirTest.scriptCalls(client.text("INFO", "commandstats"));
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
		return run;
	}

	private static final class Run {

		final List<List<Long>> admitted = new ArrayList<>();

		final long start;

		long end;

		long decisions;

		long roundTrips;

		Run(int calls, long start) {
			for (int i = 0; i < calls; i++) {
				this.admitted.add(new ArrayList<>());
			}
			this.start = start;
		}

		List<Long> admitted(int call) {
			return this.admitted.get(call);
		}

		void assertFewRoundTrips() {
			System.out.printf("fleet of %d, reservoirs of %d: %d decisions, %d round trips (%.3f per decision)%n",
					INSTANCES, RESERVOIR, this.decisions, this.roundTrips, (double) this.roundTrips / this.decisions);
			// refused calls are answered locally while Redis's refusal holds; granted
			// ones take up to N permits per fill
			assertThat(this.roundTrips).isLessThan(this.decisions / 4);
		}

	}

	/**
	 * Asserts that no interval between two admissions holds more than
	 * {@code capacity + rate * t + I * N}.
	 */
	private static void assertBucketBound(List<Long> admitted, long capacity, long perSecond) {
		double worst = Double.NEGATIVE_INFINITY;
		for (int i = 0; i < admitted.size(); i++) {
			for (int j = i; j < admitted.size(); j++) {
				double t = (admitted.get(j) - admitted.get(i)) / (double) SECOND;
				double over = (j - i + 1) - (capacity + perSecond * t);
				worst = Math.max(worst, over);
			}
		}
		System.out.printf("bucket %d + %d/s: %d admitted, at most %.1f over capacity + rate * t, bound I * N = %d%n",
				capacity, perSecond, admitted.size(), worst, INSTANCES * RESERVOIR);
		assertThat(admitted).isNotEmpty();
		assertThat(worst).isLessThanOrEqualTo(INSTANCES * RESERVOIR);
	}

	/**
	 * Asserts that at every admission, the sliding window counter's estimate over what
	 * was admitted (the current window's count plus the previous window's, weighted by
	 * the part of it the sliding window still covers) is within the limit.
	 */
	private static void assertCounterEstimateWithinLimit(List<Long> admitted, long limit, long window) {
		long worst = 0;
		for (int i = 0; i < admitted.size(); i++) {
			long at = admitted.get(i);
			long start = at - Math.floorMod(at, window);
			long current = 0;
			long previous = 0;
			for (int j = 0; j <= i; j++) {
				long t = admitted.get(j);
				if (t >= start) {
					current++;
				}
				else if (t >= start - window) {
					previous++;
				}
			}
			long into = at - start;
			long estimate = current + -Math.floorDiv(-previous * (window - into), window);
			worst = Math.max(worst, estimate);
		}
		System.out.printf("sliding window counter %d: highest estimate over what was admitted %d%n", limit, worst);
		assertThat(admitted).isNotEmpty();
		assertThat(worst).isLessThanOrEqualTo(limit);
	}

	private static long[] perWindow(List<Long> admitted, long start, long end) {
		long first = start - Math.floorMod(start, SECOND);
		long[] counts = new long[(int) ((end - first) / SECOND) + 1];
		for (long at : admitted) {
			counts[(int) ((at - first) / SECOND)]++;
		}
		return counts;
	}

}
