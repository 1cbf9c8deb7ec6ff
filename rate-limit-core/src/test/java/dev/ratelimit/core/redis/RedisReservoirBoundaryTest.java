package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.LongStream;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two-tier mode across a window's boundary: a fill that an instance sends before the
 * boundary and Redis runs after it is decided on the next window's permits alone, and the
 * permits held from the window before lapse. A fleet whose fills Redis runs a few
 * milliseconds late admits at most a fixed window's limit in each window (and keeps the
 * other bounds of docs/REDIS.md), and no status reports more remaining than the limit.
 * Redis's clock is the script's ({@code scriptTimeSource}), apart from the instances'.
 */
@ExtendWith(RedisExtension.class)
class RedisReservoirBoundaryTest {

	private static final long SECOND = 1_000_000;

	private static final long MILLI = 1_000;

	private static final int INSTANCES = 3;

	private static final int RESERVOIR = 10;

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

	/**
	 * Issue 32's reproduction: reservoirs of 16 on a fixed window of 100/1s, a fill ahead
	 * sent at 0.999 s that Redis runs at 1.001 s.
	 */
	@Test
	void aFillAheadThatRedisRunsInTheNextWindowServesNoPermitOfTheWindowBefore() {
		ManualTimeSource clock = new ManualTimeSource();
		ManualTimeSource redis = new ManualTimeSource();
		long start = clock.nowMicros();
		String prefix = TestRedis.uniquePrefix();
		RedisRateLimiter limiter = limiter(factories.get(0), prefix, 16, clock, redis);
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.fixedWindow("100/1s"));
		try {
			// a call finds another call's fill on its way (this test's, by hand), as the
			// callers of a busy key do: the reservoir is then filled ahead
			PermitReservoirs.Reservoir reservoir = limiter.reservoir(limit);
			PermitReservoirs.Claimed other = (PermitReservoirs.Claimed) reservoir.step(limit, 1, start, true);
			CompletableFuture<Decision> waiting = limiter.acquireAsync(List.of(limit), 1);
			reservoir.end(limit, other, 0, start);
			// 16 taken in the window [0, 1 s), 1 of them used; 13 more calls leave 2
			assertThat(waiting.join().isAllowed()).isTrue();
			for (int i = 0; i < 13; i++) {
				assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			}
			assertThat(reservoir.permits()).isEqualTo(2);
			// at 0.999 s the next call leaves 1 and sends a fill ahead, which Redis runs
			// at 1.001 s: 15 permits of the window [1 s, 2 s)
			clock.set(start + 999 * MILLI);
			redis.set(start + 1001 * MILLI);
			assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			await().atMost(Duration.ofSeconds(5)).until(() -> reservoir.permits() > 1);
			LimitStatus held = reservoir.status(limit, clock.nowMicros());
			System.out.printf("fill ahead run by Redis in the next window: %d held here, remaining %d of 100%n",
					reservoir.permits(), held.remaining());
			assertThat(held.remaining()).isLessThanOrEqualTo(100);
			// at 1.9 s the instance admits, from its reservoir and from Redis, what Redis
			// counts in the window [1 s, 2 s): 100
			clock.set(start + 1900 * MILLI);
			redis.set(start + 1900 * MILLI);
			int admitted = 0;
			Decision decision;
			while ((decision = limiter.acquire(limit)).isAllowed()) {
				assertThat(decision.remaining()).isLessThanOrEqualTo(100);
				admitted++;
			}
			System.out.printf("admitted in the window [1 s, 2 s): %d of 100%n", admitted);
			assertThat(admitted).isEqualTo(100);
		}
		finally {
			limiter.close();
		}
	}

	/**
	 * An instance holds 4 permits of the window [0, 1 s) and sends a call of 5 at 0.999
	 * s; Redis runs its fill at 1.001 s, after another instance took 7 of the 10 of the
	 * window [1 s, 2 s). The call is decided as Redis would decide it at 1.001 s: 3 left,
	 * refused until 2 s.
	 */
	@Test
	void aFillRedisRunsInTheNextWindowTakesTheWholeCostFromThatWindow() {
		ManualTimeSource redis = new ManualTimeSource();
		long start = redis.nowMicros();
		ManualTimeSource clockOfA = new ManualTimeSource(start);
		ManualTimeSource clockOfB = new ManualTimeSource(start);
		String prefix = TestRedis.uniquePrefix();
		RedisRateLimiter a = limiter(factories.get(0), prefix, 5, clockOfA, redis);
		RedisRateLimiter b = limiter(factories.get(1), prefix, 0, clockOfB, redis);
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.fixedWindow("10/1s"));
		try {
			clockOfA.set(start + 500 * MILLI);
			redis.set(start + 500 * MILLI);
			assertThat(a.acquire(limit).isAllowed()).isTrue();
			assertThat(a.reservoir(limit).permits()).isEqualTo(4);
			clockOfB.set(start + 1000 * MILLI + 500);
			redis.set(start + 1000 * MILLI + 500);
			assertThat(b.acquire(limit, 7).isAllowed()).isTrue();
			clockOfA.set(start + 999 * MILLI);
			redis.set(start + 1001 * MILLI);
			Decision late = a.acquire(limit, 5);
			System.out.printf("a call of 5 holding 4 of the window before, 3 left in Redis's: allowed %s, retry %s%n",
					late.isAllowed(), late.retryAfter());
			assertThat(late.isAllowed()).isFalse();
			assertThat(late.retryAfter()).isEqualTo(Duration.ofMillis(999));
			// within the window [1 s, 2 s), the fleet admits its 10 and no more
			clockOfA.set(start + 1500 * MILLI);
			redis.set(start + 1500 * MILLI);
			int admitted = 7 + (late.isAllowed() ? 5 : 0);
			while (a.acquire(limit).isAllowed()) {
				admitted++;
			}
			System.out.printf("fleet admitted in the window [1 s, 2 s): %d of 10%n", admitted);
			assertThat(admitted).isEqualTo(10);
		}
		finally {
			a.close();
			b.close();
		}
	}

	@Test
	void aFleetWhoseFillsRedisRunsLateAdmitsAtMostAFixedWindowsLimitInEveryWindow() {
		Run run = drive(List.of(List.of(new KeyedLimit("fw", "client", Limit.fixedWindow("100/1s")))),
				(call) -> call.get(0));
		long[] perWindow = new long[(int) ((run.end - run.start) / SECOND) + 1];
		for (Admission admission : run.admitted) {
			perWindow[(int) ((admission.at() - run.start) / SECOND)] += admission.cost();
		}
		System.out.printf("fixed window 100/1s, Redis late: fleet admitted per window %s%n",
				Arrays.toString(perWindow));
		assertThat(LongStream.of(perWindow).max().orElseThrow()).isLessThanOrEqualTo(100);
		run.assertNoStatusAboveItsLimit();
	}

	@Test
	void aFleetWhoseFillsRedisRunsLateKeepsASlidingWindowCountersEstimateWithinItsLimit() {
		Run run = drive(List.of(List.of(new KeyedLimit("swc", "client", Limit.slidingWindowCounter("100/1s")))),
				(call) -> call.get(0));
		long worst = 0;
		for (int i = 0; i < run.admitted.size(); i++) {
			long at = run.admitted.get(i).at();
			long windowStart = at - Math.floorMod(at, SECOND);
			long current = 0;
			long previous = 0;
			for (int j = 0; j <= i; j++) {
				Admission earlier = run.admitted.get(j);
				if (earlier.at() >= windowStart) {
					current += earlier.cost();
				}
				else if (earlier.at() >= windowStart - SECOND) {
					previous += earlier.cost();
				}
			}
			long estimate = current - Math.floorDiv(-previous * (SECOND - (at - windowStart)), SECOND);
			worst = Math.max(worst, estimate);
		}
		System.out.printf("sliding window counter 100/1s, Redis late: highest estimate over what was admitted %d%n",
				worst);
		assertThat(worst).isLessThanOrEqualTo(100);
		run.assertNoStatusAboveItsLimit();
	}

	@Test
	void aFleetWhoseFillsRedisRunsLateKeepsASlidingLogsBound() {
		Run run = drive(List.of(List.of(new KeyedLimit("swl", "client", Limit.slidingWindowLog("100/1s")))),
				(call) -> call.get(0));
		long most = 0;
		for (int i = 0, j = 0; i < run.admitted.size(); i++) {
			while (run.admitted.get(i).at() - run.admitted.get(j).at() >= SECOND) {
				j++;
			}
			long inWindow = 0;
			for (int k = j; k <= i; k++) {
				inWindow += run.admitted.get(k).cost();
			}
			most = Math.max(most, inWindow);
		}
		System.out.printf("sliding log 100/1s, Redis late: at most %d admitted in a window, bound %d%n", most,
				100 + INSTANCES * RESERVOIR);
		assertThat(most).isLessThanOrEqualTo(100 + INSTANCES * RESERVOIR);
		run.assertNoStatusAboveItsLimit();
	}

	/**
	 * The sample's three limits at once, the global window a fixed one here: every limit
	 * of a call its fill straddles is decided in the window Redis runs it in.
	 */
	@Test
	void aFleetWhoseFillsRedisRunsLateKeepsTheGlobalWindowOfACallWithSeveralLimits() {
		Limit global = Limit.fixedWindow("100/1s");
		List<List<KeyedLimit>> calls = new ArrayList<>();
		for (int client = 0; client < 4; client++) {
			calls.add(List.of(new KeyedLimit("api", "client-" + client, Limit.tokenBucket("600/1m")),
					new KeyedLimit("capacity", "global", global),
					new KeyedLimit("burst", "client-" + client, Limit.tokenBucket("20/1s", 40))));
		}
		Run run = drive(calls, (call) -> call.get(1));
		long[] perWindow = new long[(int) ((run.end - run.start) / SECOND) + 1];
		for (Admission admission : run.admitted) {
			perWindow[(int) ((admission.at() - run.start) / SECOND)] += admission.cost();
		}
		System.out.printf("three limits, global fixed window 100/1s, Redis late: fleet admitted per window %s%n",
				Arrays.toString(perWindow));
		assertThat(LongStream.of(perWindow).max().orElseThrow()).isLessThanOrEqualTo(100);
		run.assertNoStatusAboveItsLimit();
	}

	private static RedisRateLimiter limiter(LettuceConnectionFactory factory, String prefix, long reservoir,
			TimeSource clock, TimeSource redis) {
		return RedisRateLimiter.builder(factory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.reservoir(reservoir)
			.timeSource(clock)
			.scriptTimeSource(redis)
			.build();
	}

	/**
	 * Drives a fleet of {@value #INSTANCES} instances, on one clock, for 10 s, in turns
	 * of a light window and a heavy one. In a light window, every 1 to 20 ms each
	 * instance makes a call of a cost of 1 to 3 one time in eight (under the limits, so
	 * that reservoirs hold permits at its end); 0 to 3 ms before its end each instance
	 * makes a call of one permit more than its reservoir of the window limit holds, which
	 * Redis runs just after the boundary. In a heavy window each instance makes 0 to 9
	 * calls every 1 to 20 ms, far over the limits. Redis runs the other calls 0 to 3 ms
	 * after they were sent (its clock never goes back). A call's answer comes when Redis
	 * has run it, and the call is admitted then; a call served here is admitted at once.
	 * @param calls the calls to pick from
	 * @param window the window limit of each call, whose reservoir the calls before a
	 * boundary outgrow
	 */
	private static Run drive(List<List<KeyedLimit>> calls, Function<List<KeyedLimit>, KeyedLimit> window) {
		ManualTimeSource clock = new ManualTimeSource();
		LateRedis redis = new LateRedis(clock);
		String prefix = TestRedis.uniquePrefix();
		List<RedisRateLimiter> fleet = factories.stream()
			.map((factory) -> limiter(factory, prefix, RESERVOIR, clock, redis))
			.toList();
		Random random = new Random(32);
		Run run = new Run(clock.nowMicros());
		try {
			long end = run.start + 10 * SECOND;
			while (clock.nowMicros() < end) {
				long number = (clock.nowMicros() - run.start) / SECOND;
				boolean light = number % 2 == 0;
				for (RedisRateLimiter instance : fleet) {
					int burst = light ? ((random.nextInt(8) == 0) ? 1 : 0) : random.nextInt(10);
					for (int i = 0; i < burst; i++) {
						List<KeyedLimit> call = calls.get(random.nextInt(calls.size()));
						run.call(instance, call, 1 + random.nextInt(3), random.nextInt(4) * MILLI, clock, redis);
					}
				}
				long step = (1 + random.nextInt(20)) * MILLI;
				long boundary = run.start + (number + 1) * SECOND;
				if (light && clock.nowMicros() + step >= boundary) {
					clock.set(boundary - 1 - random.nextInt(3000));
					for (RedisRateLimiter instance : fleet) {
						List<KeyedLimit> call = calls.get(random.nextInt(calls.size()));
						long held = instance.reservoir(window.apply(call)).permits();
						long late = boundary - clock.nowMicros() + random.nextInt(2000);
						run.call(instance, call, Math.min(RESERVOIR, held + 1), late, clock, redis);
					}
					step = Math.max(0, boundary - clock.nowMicros());
				}
				clock.advance(Duration.ofNanos(step * 1000));
			}
			run.end = clock.nowMicros();
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
		run.admitted.sort((x, y) -> Long.compare(x.at(), y.at()));
		return run;
	}

	/**
	 * Redis's clock: the instances' time plus the delay of the call being sent, never
	 * going back; remembers whether a call read it.
	 */
	private static final class LateRedis implements TimeSource {

		private final TimeSource clock;

		volatile long delay;

		volatile long last;

		volatile boolean read;

		LateRedis(TimeSource clock) {
			this.clock = clock;
		}

		@Override
		public synchronized long nowMicros() {
			this.last = Math.max(this.last, this.clock.nowMicros() + this.delay);
			this.read = true;
			return this.last;
		}

	}

	private record Admission(long at, long cost) {

	}

	private static final class Run {

		final long start;

		long end;

		final List<Admission> admitted = new ArrayList<>();

		final List<LimitStatus> statuses = new ArrayList<>();

		Run(long start) {
			this.start = start;
		}

		/**
		 * Makes a call that Redis, if it is asked, runs {@code delay} after it was sent,
		 * and records what it admitted and reported.
		 */
		void call(RedisRateLimiter instance, List<KeyedLimit> limits, long cost, long delay, ManualTimeSource clock,
				LateRedis redis) {
			redis.delay = delay;
			redis.read = false;
			Decision decision = instance.acquire(limits, cost);
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			this.statuses.addAll(decision.statuses());
			if (redis.read) {
				// its answer comes once Redis has run it
				clock.set(Math.max(clock.nowMicros(), redis.last));
			}
			if (decision.isAllowed()) {
				this.admitted.add(new Admission(clock.nowMicros(), cost));
			}
		}

		void assertNoStatusAboveItsLimit() {
			assertThat(this.admitted).isNotEmpty();
			assertThat(this.statuses).allMatch((status) -> status.remaining() <= status.limit(),
					"remaining at most the limit");
		}

	}

}
