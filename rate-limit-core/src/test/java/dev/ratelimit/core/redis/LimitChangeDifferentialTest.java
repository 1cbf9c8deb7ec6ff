package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A limit that changes its rate or capacity under the same name keeps each client's spent
 * permits ("spent stays spent"), a changed algorithm starts fresh unless the new limit
 * names the old one as a counterpart (another tier's limit at the same position), whose
 * spent share it then takes over, alike in memory and in Redis: every call runs on both,
 * on one manual clock, and every status must be equal.
 */
class LimitChangeDifferentialTest {

	private static LettuceConnectionFactory connectionFactory;

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter memory = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final RedisRateLimiter redis = RedisRateLimiter.builder(connectionFactory)
		.keyPrefix(TestRedis.uniquePrefix())
		.timeout(Duration.ofSeconds(5))
		.timeSource(this.clock)
		.build();

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.standalone().lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@AfterEach
	void close() {
		this.redis.close();
	}

	@Test
	void aRaisedTokenBucketKeepsWhatWasSpent() {
		// The worked example: 60/1m with 50 spent becomes 100/1m: 50 left, not 100.
		acquire(limit(Limit.tokenBucket("60/1m")), 50);
		assertThat(remaining(limit(Limit.tokenBucket("100/1m")))).isEqualTo(50);
		assertThat(acquire(limit(Limit.tokenBucket("100/1m")), 1).remaining()).isEqualTo(49);
	}

	@Test
	void aLoweredTokenBucketIsEmptyAndRefillsFromTheChangeAtTheNewRate() {
		acquire(limit(Limit.tokenBucket("100/1m")), 30);
		KeyedLimit lowered = limit(Limit.tokenBucket("20/1m"));
		assertThat(remaining(lowered)).isZero();
		Decision first = acquire(lowered, 1);
		assertThat(first.isAllowed()).isFalse();
		assertThat(first.retryAfter()).isEqualTo(Duration.ofSeconds(3));
		// a rejected call wrote the conversion: the new rate counts from it, not the old
		this.clock.advance(Duration.ofSeconds(3));
		assertThat(acquire(lowered, 1).remaining()).isZero();
		this.clock.advance(Duration.ofSeconds(6));
		assertThat(remaining(lowered)).isEqualTo(2);
	}

	@Test
	void aTokenBucketsCapacityUpAndDownKeepsWhatWasSpentInExactUnits() {
		acquire(limit(Limit.tokenBucket("10/1s", 10)), 4);
		this.clock.advance(Duration.ofMillis(150));
		// 1.5 tokens refilled under the old limit: 2.5 spent
		assertThat(acquire(limit(Limit.tokenBucket("10/1s", 20)), 0).remaining()).isEqualTo(17);
		this.clock.advance(Duration.ofMillis(50));
		assertThat(acquire(limit(Limit.tokenBucket("10/1s", 5)), 1).remaining()).isEqualTo(2);
		this.clock.advance(Duration.ofMillis(100));
		assertThat(remaining(limit(Limit.tokenBucket("10/1s", 5)))).isEqualTo(3);
	}

	@Test
	void aLeakyBucketKeepsItsWater() {
		acquire(limit(Limit.leakyBucket("10/1s")), 6);
		assertThat(remaining(limit(Limit.builder(Algorithm.LEAKY_BUCKET).rate("10/1s").capacity(20).build())))
			.isEqualTo(14);
		KeyedLimit shallow = limit(Limit.builder(Algorithm.LEAKY_BUCKET).rate("2/1s").capacity(4).build());
		Decision rejected = acquire(shallow, 1);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		// at most the new depth is kept, and it leaks at the new rate
		this.clock.advance(Duration.ofMillis(500));
		assertThat(acquire(shallow, 1).remaining()).isZero();
	}

	@Test
	void aFixedWindowsCountLivesInTheShorterWindowThatHoldsNow() {
		this.clock.advance(Duration.ofSeconds(12));
		acquire(limit(Limit.fixedWindow("100/1m")), 30);
		KeyedLimit shorter = limit(Limit.fixedWindow("50/10s"));
		assertThat(acquire(shorter, 1).remaining()).isEqualTo(19);
		this.clock.advance(Duration.ofSeconds(8));
		assertThat(remaining(shorter)).isEqualTo(50);
	}

	@Test
	void aFixedWindowsCountLivesInTheLongerWindowThatHoldsNow() {
		this.clock.advance(Duration.ofSeconds(12));
		acquire(limit(Limit.fixedWindow("100/1m")), 30);
		KeyedLimit longer = limit(Limit.fixedWindow("200/1h"));
		assertThat(acquire(longer, 1).remaining()).isEqualTo(169);
		this.clock.advance(Duration.ofMinutes(30));
		assertThat(remaining(longer)).isEqualTo(169);
		this.clock.advance(Duration.ofMinutes(30));
		assertThat(remaining(longer)).isEqualTo(200);
	}

	@Test
	void aCalendarDaysCountStaysUntilItsRealEndWhenOnlyTheQuotaChanges() {
		// 23:00 in Paris on the day of 25 hours: the day ends two hours later, not one
		this.clock.set(micros("2027-10-31T22:00:00Z"));
		acquire(limit(calendar("100/1d", "Europe/Paris")), 30);
		KeyedLimit raised = limit(calendar("200/1d", "Europe/Paris"));
		assertThat(acquire(raised, 1).remaining()).isEqualTo(169);
		this.clock.advance(Duration.ofMinutes(59));
		assertThat(remaining(raised)).isEqualTo(169);
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(remaining(raised)).isEqualTo(200);
	}

	@Test
	void aCalendarCountMovesIntoTheWindowOfANewPeriodOrZone() {
		this.clock.set(micros("2027-03-10T12:00:00Z"));
		acquire(limit(calendar("100/1d", "Europe/Paris")), 30);
		KeyedLimit monthly = limit(calendar("1000/1mo", "Europe/Paris"));
		assertThat(acquire(monthly, 1).remaining()).isEqualTo(969);
		KeyedLimit utc = limit(calendar("1000/1mo", "UTC"));
		assertThat(acquire(utc, 1).remaining()).isEqualTo(968);
		KeyedLimit epoch = limit(Limit.fixedWindow("1000/1d"));
		assertThat(acquire(epoch, 1).remaining()).isEqualTo(967);
		this.clock.set(micros("2027-03-11T00:00:00Z"));
		assertThat(remaining(epoch)).isEqualTo(1000);
	}

	private static Limit calendar(String rate, String zone) {
		return Limit.builder(dev.ratelimit.core.Algorithm.FIXED_WINDOW)
			.rate(rate)
			.align(dev.ratelimit.core.WindowAlignment.CALENDAR)
			.zone(zone)
			.build();
	}

	private static long micros(String instant) {
		java.time.Instant at = java.time.Instant.parse(instant);
		return at.getEpochSecond() * 1_000_000L + at.getNano() / 1000;
	}

	@Test
	void aFixedWindowLoweredBelowItsCountIsSpentUntilTheWindowEnds() {
		acquire(limit(Limit.fixedWindow("100/1m")), 30);
		KeyedLimit lowered = limit(Limit.fixedWindow("20/1m"));
		assertThat(acquire(lowered, 1).isAllowed()).isFalse();
		assertThat(remaining(lowered)).isZero();
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(remaining(lowered)).isEqualTo(20);
	}

	@Test
	void aSlidingLogKeepsItsEntries() {
		acquire(limit(Limit.slidingWindowLog("10/1s")), 6);
		assertThat(remaining(limit(Limit.slidingWindowLog("20/2s")))).isEqualTo(14);
		this.clock.advance(Duration.ofMillis(500));
		KeyedLimit lowered = limit(Limit.slidingWindowLog("5/1s"));
		assertThat(acquire(lowered, 1).isAllowed()).isFalse();
		assertThat(remaining(lowered)).isZero();
		this.clock.advance(Duration.ofMillis(500));
		assertThat(acquire(lowered, 1).remaining()).isEqualTo(4);
	}

	@Test
	void aSlidingCounterKeepsItsCountsOrItsEstimate() {
		acquire(limit(Limit.slidingWindowCounter("10/1s")), 6);
		assertThat(remaining(limit(Limit.slidingWindowCounter("20/1s")))).isEqualTo(14);
		this.clock.advance(Duration.ofMillis(1500));
		// 6 in the previous window, half of it still covered: an estimate of 3
		KeyedLimit longer = limit(Limit.slidingWindowCounter("40/4s"));
		assertThat(acquire(longer, 1).remaining()).isEqualTo(36);
		this.clock.advance(Duration.ofSeconds(3));
		assertThat(remaining(longer)).isEqualTo(36);
	}

	@Test
	void aConcurrencyLimitKeepsItsCallsInFlight() {
		List<Decision> held = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			held.add(acquire(limit(Limit.concurrency(3)), 1));
		}
		assertThat(remaining(limit(Limit.concurrency(5)))).isEqualTo(2);
		KeyedLimit lowered = limit(Limit.concurrency(2));
		assertThat(acquire(lowered, 1).isAllowed()).isFalse();
		assertThat(remaining(lowered)).isZero();
		release(held.remove(0));
		assertThat(acquire(lowered, 1).isAllowed()).isFalse();
		release(held.remove(0));
		assertThat(acquire(lowered, 1).isAllowed()).isTrue();
	}

	@Test
	void aChangedAlgorithmStartsFresh() {
		acquire(limit(Limit.tokenBucket("10/1m")), 10);
		assertThat(remaining(limit(Limit.fixedWindow("10/1m")))).isEqualTo(10);
		assertThat(acquire(limit(Limit.fixedWindow("10/1m")), 4).remaining()).isEqualTo(6);
		// the other algorithm's state is its own
		assertThat(remaining(limit(Limit.tokenBucket("10/1m")))).isZero();
	}

	@Test
	void aClientFlippingFromASpentFixedWindowTierToATokenBucketTierAndBackGetsNoFreshQuota() {
		KeyedLimit free = tier(Limit.fixedWindow("60/1m"), Limit.tokenBucket("1000/1m"));
		KeyedLimit paid = tier(Limit.tokenBucket("1000/1m"), Limit.fixedWindow("60/1m"));
		this.clock.advance(Duration.ofSeconds(10));
		for (int i = 0; i < 60; i++) {
			assertThat(acquire(free, 1).isAllowed()).isTrue();
		}
		assertThat(acquire(free, 1).isAllowed()).isFalse();
		// it spent all of the free tier's minute: the paid tier takes that share over
		// (not
		// 1000 fresh tokens)
		assertThat(remaining(paid)).isZero();
		Decision flipped = acquire(paid, 1);
		assertThat(flipped.isAllowed()).isFalse();
		assertThat(flipped.retryAfter()).isEqualTo(Duration.ofMillis(60));
		// and back: the free tier's own count stays, the paid tier refills at its rate
		assertThat(acquire(free, 1).isAllowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(6));
		assertThat(acquire(paid, 100).remaining()).isZero();
		assertThat(acquire(free, 1).isAllowed()).isFalse();
		assertThat(acquire(paid, 1).isAllowed()).isFalse();
		// the free tier's next minute starts with the paid bucket's share: 266.67 of 1000
		// tokens missing, counted as 267, makes 16.02 of 60, counted as 17
		this.clock.advance(Duration.ofSeconds(44));
		assertThat(remaining(free)).isEqualTo(43);
		assertThat(acquire(free, 1).remaining()).isEqualTo(42);
	}

	@Test
	void theWorkedExampleStartsThePaidBucketWith750Spent() {
		// free fixed-window 60/1m with 45 used: paid token-bucket 1000/1m has 250 left
		KeyedLimit free = tier(Limit.fixedWindow("60/1m"), Limit.tokenBucket("1000/1m"));
		KeyedLimit paid = tier(Limit.tokenBucket("1000/1m"), Limit.fixedWindow("60/1m"));
		this.clock.advance(Duration.ofSeconds(10));
		acquire(free, 45);
		assertThat(remaining(paid)).isEqualTo(250);
		assertThat(acquire(paid, 1).remaining()).isEqualTo(249);
		// the share is taken over once: it does not come back once the bucket refilled
		// within the free window
		this.clock.advance(Duration.ofSeconds(46));
		assertThat(remaining(paid)).isEqualTo(1000);
		assertThat(acquire(paid, 1).remaining()).isEqualTo(999);
		// nor does the paid spending cost the free tier more than its own count
		assertThat(remaining(free)).isEqualTo(15);
	}

	@Test
	void aShareSpentAgainInTheOtherTierIsTakenOverAgain() {
		KeyedLimit free = tier(Limit.tokenBucket("60/1m"), Limit.fixedWindow("1000/1m"));
		KeyedLimit paid = tier(Limit.fixedWindow("1000/1m"), Limit.tokenBucket("60/1m"));
		acquire(free, 30);
		assertThat(acquire(paid, 1).remaining()).isEqualTo(499);
		// the next paid minute holds nothing spent, and the bucket has refilled
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(remaining(paid)).isEqualTo(1000);
		// spent again in the free tier: a share that counts later than the one taken over
		acquire(free, 60);
		this.clock.advance(Duration.ofSeconds(6));
		assertThat(remaining(paid)).isEqualTo(100);
	}

	@Test
	void aConcurrencyLimitCarriesNoShareAndTakesNoneOver() {
		assertThatIllegalArgumentException().isThrownBy(() -> tier(Limit.tokenBucket("10/1s"), Limit.concurrency(3)))
			.withMessageContaining("neither is a concurrency limit");
		assertThatIllegalArgumentException().isThrownBy(() -> tier(Limit.concurrency(3), Limit.tokenBucket("10/1s")))
			.withMessageContaining("'concurrency'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> tier(Limit.tokenBucket("10/1s"), Limit.tokenBucket("20/1s")))
			.withMessageContaining("another algorithm");
	}

	@Test
	void eachAlgorithmTakesOverTheShareOfEachOther() {
		List<Limit> limits = List.of(Limit.tokenBucket("10/1s"), Limit.leakyBucket("10/1s"), Limit.fixedWindow("10/1s"),
				Limit.slidingWindowCounter("10/1s"), Limit.slidingWindowLog("10/1s"));
		for (Limit from : limits) {
			for (Limit to : limits) {
				if (from.algorithm() != to.algorithm()) {
					this.clock.advance(Duration.ofMinutes(1));
					String client = from.algorithm().configName() + ">" + to.algorithm().configName();
					acquire(tier(client, from, to), 4);
					assertThat(remaining(tier(client, to, from))).as("%s to %s", from, to).isEqualTo(6);
					assertThat(acquire(tier(client, to, from), 6).isAllowed()).isTrue();
					assertThat(acquire(tier(client, to, from), 1).isAllowed()).isFalse();
				}
			}
		}
	}

	@Test
	void refusesTwoLimitsOfOneNameWithDifferentParametersInOneCall() {
		List<KeyedLimit> limits = List.of(limit(Limit.tokenBucket("10/1m")), limit(Limit.tokenBucket("20/1m")));
		assertThatIllegalArgumentException().isThrownBy(() -> this.redis.acquire(limits, 1))
			.withMessageContaining("'p'")
			.withMessageContaining("'the-limit'");
		assertThatIllegalArgumentException().isThrownBy(() -> this.redis.inspect(limits))
			.withMessageContaining("give each limit its own name");
	}

	static Stream<List<Limit>> variants() {
		return Stream.of(
				List.of(Limit.tokenBucket("60/1m"), Limit.tokenBucket("100/1m"), Limit.tokenBucket("20/1m"),
						Limit.tokenBucket("7/3s", 5), Limit.tokenBucket("60/1m", 10)),
				List.of(Limit.leakyBucket("10/1s"), Limit.leakyBucket("3/1s"),
						Limit.builder(Algorithm.LEAKY_BUCKET).rate("10/1s").capacity(4).build(),
						Limit.builder(Algorithm.LEAKY_BUCKET).rate("5/1s").capacity(8).mode(LeakMode.SHAPE).build()),
				List.of(Limit.fixedWindow("10/1s"), Limit.fixedWindow("4/1s"), Limit.fixedWindow("20/3s"),
						Limit.fixedWindow("6/300ms")),
				List.of(Limit.slidingWindowCounter("10/1s"), Limit.slidingWindowCounter("4/1s"),
						Limit.slidingWindowCounter("20/3s"), Limit.slidingWindowCounter("6/300ms")),
				List.of(Limit.slidingWindowLog("10/1s"), Limit.slidingWindowLog("4/1s"),
						Limit.slidingWindowLog("20/3s"), Limit.slidingWindowLog("6/300ms")),
				List.of(Limit.concurrency(3), Limit.concurrency(1), Limit.concurrency(6)));
	}

	/**
	 * A key whose limit moves at random between limits of one name and algorithm: every
	 * decision equal in memory and in Redis, and no change hands out quota: at the
	 * instant of a change, what is left is at most the new capacity less what was spent.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("variants")
	void aKeyMovingBetweenLimitsOfOneNameNeverGainsQuota(List<Limit> variants) {
		Random random = new Random(variants.toString().hashCode());
		Algorithm algorithm = variants.get(0).algorithm();
		// within every variant's retention, so that memory keeps the key as Redis does
		long longestStep = variants.stream().mapToLong(Limit::retentionMicros).min().orElseThrow() / 2;
		boolean bounded = algorithm != Algorithm.SLIDING_WINDOW_LOG;
		Limit current = variants.get(0);
		List<Decision> held = new ArrayList<>();
		for (int step = 0; step < 300; step++) {
			this.clock.advanceMicros((random.nextInt(3) == 0) ? 0 : random.nextLong(longestStep));
			if (!held.isEmpty() && random.nextInt(3) == 0) {
				release(held.remove(random.nextInt(held.size())));
				continue;
			}
			if (random.nextInt(5) == 0) {
				Limit next = variants.get(random.nextInt(variants.size()));
				long before = remaining(limit(current));
				long after = remaining(limit(next));
				if (bounded) {
					long spent = current.capacity() - before;
					assertThat(after).as("step %d: %s to %s", step, current, next)
						.isLessThanOrEqualTo(Math.max(0, next.capacity() - spent));
				}
				current = next;
			}
			long cost = (random.nextInt(6) == 0) ? random.nextLong(current.capacity() + 2) : 1;
			Decision decision = acquire(limit(current), cost);
			if (!decision.leases().isEmpty()) {
				held.add(decision);
			}
		}
	}

	/**
	 * Tiers whose limits differ in algorithm at a position: each keyed limit names the
	 * others at its position as its counterparts (as the starter's {@code Policy} does),
	 * so that a client moving between them takes the spent share over.
	 */
	static Stream<Map<String, List<Limit>>> tierSets() {
		Map<String, List<Limit>> flagship = new LinkedHashMap<>();
		flagship.put("free", List.of(Limit.fixedWindow("60/1m")));
		flagship.put("paid", List.of(Limit.tokenBucket("1000/1m")));
		Map<String, List<Limit>> five = new LinkedHashMap<>();
		five.put("a", List.of(Limit.tokenBucket("10/1s", 20), Limit.fixedWindow("30/5s")));
		five.put("b", List.of(Limit.fixedWindow("7/1s")));
		five.put("c", List.of(Limit.slidingWindowCounter("12/2s"), Limit.tokenBucket("9/1s")));
		five.put("d", List.of(Limit.slidingWindowLog("6/700ms")));
		five.put("e", List.of(Limit.builder(Algorithm.LEAKY_BUCKET).rate("5/1s").capacity(8).build()));
		Map<String, List<Limit>> calendar = new LinkedHashMap<>();
		calendar.put("monthly",
				List.of(Limit.builder(Algorithm.FIXED_WINDOW)
					.rate("40/1d")
					.align(dev.ratelimit.core.WindowAlignment.CALENDAR)
					.zone("Europe/Paris")
					.build()));
		calendar.put("burst", List.of(Limit.tokenBucket("20/1h", 10)));
		calendar.put("log", List.of(Limit.slidingWindowLog("30/6h")));
		return Stream.of(flagship, five, calendar);
	}

	/**
	 * A client moving at random between tiers whose limits differ in algorithm, with
	 * costs from 0 to above capacity: every decision and inspection equal in memory and
	 * in Redis. The client keeps coming back (each state's own), and first moves into a
	 * tier take a share over (its first limit shows less than its capacity before any
	 * call of its own).
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("tierSets")
	void aClientMovingBetweenTiersOfOtherAlgorithmsIsDecidedAlike(Map<String, List<Limit>> tiers) {
		Random random = new Random(tiers.toString().hashCode());
		List<String> names = new ArrayList<>(tiers.keySet());
		long longestWindow = tiers.values()
			.stream()
			.flatMap(List::stream)
			.mapToLong(Limit::windowMicros)
			.max()
			.orElseThrow();
		String tier = names.get(0);
		List<KeyedLimit> used = new ArrayList<>();
		int moves = 0;
		int takenOver = 0;
		for (int step = 0; step < 400; step++) {
			int roll = random.nextInt(10);
			this.clock.advanceMicros((roll < 3) ? 0
					: (roll < 8) ? random.nextLong(longestWindow / 20 + 1) : random.nextLong(longestWindow + 1));
			if (random.nextInt(4) == 0) {
				String next = names.get(random.nextInt(names.size()));
				if (!next.equals(tier)) {
					moves++;
					KeyedLimit first = keyed(tiers, next).get(0);
					boolean fresh = used.stream().noneMatch(first::sharesStateWith);
					if (fresh && inspect(keyed(tiers, next)).get(0).remaining() < first.limit().capacity()) {
						takenOver++;
					}
				}
				tier = next;
			}
			List<KeyedLimit> limits = keyed(tiers, tier);
			used.addAll(limits);
			long capacity = limits.get(0).limit().capacity();
			long cost = (random.nextInt(6) == 0) ? random.nextLong(capacity + 2) : random.nextInt(3);
			if (random.nextInt(8) == 0) {
				inspect(limits);
			}
			else {
				acquireAll(limits, cost);
			}
		}
		assertThat(moves).isGreaterThan(40);
		assertThat(takenOver).isPositive();
	}

	/** The keyed limits of a tier, each naming the others' at its position. */
	private static List<KeyedLimit> keyed(Map<String, List<Limit>> tiers, String tier) {
		List<Limit> own = tiers.get(tier);
		List<KeyedLimit> keyed = new ArrayList<>();
		for (int i = 0; i < own.size(); i++) {
			List<KeyedLimit.Counterpart> counterparts = new ArrayList<>();
			for (List<Limit> other : tiers.values()) {
				if (other != own && i < other.size() && other.get(i).algorithm() != own.get(i).algorithm()) {
					String name = name(other, i);
					boolean ownState = false;
					for (int j = 0; j < own.size(); j++) {
						ownState |= name(own, j).equals(name) && own.get(j).algorithm() == other.get(i).algorithm();
					}
					if (!ownState) {
						counterparts.add(new KeyedLimit.Counterpart(name, other.get(i)));
					}
				}
			}
			keyed.add(new KeyedLimit("p", "alice", name(own, i), own.get(i), counterparts));
		}
		return keyed;
	}

	/** The starter's {@code Policy.limitName}: the algorithm, and its ordinal. */
	private static String name(List<Limit> limits, int index) {
		int same = 0;
		for (int i = 0; i < index; i++) {
			same += (limits.get(i).algorithm() == limits.get(index).algorithm()) ? 1 : 0;
		}
		String name = limits.get(index).algorithm().configName();
		return (same == 0) ? name : name + "-" + (same + 1);
	}

	/** The first limit of a tier, naming the others as its counterparts. */
	private static KeyedLimit tier(Limit limit, Limit... others) {
		return tier("alice", limit, others);
	}

	private static KeyedLimit tier(String client, Limit limit, Limit... others) {
		List<KeyedLimit.Counterpart> counterparts = Stream.of(others)
			.map((other) -> new KeyedLimit.Counterpart(other.algorithm().configName(), other))
			.toList();
		return new KeyedLimit("p", client, limit.algorithm().configName(), limit, counterparts);
	}

	private static KeyedLimit limit(Limit limit) {
		return new KeyedLimit("p", "alice", "the-limit", limit);
	}

	private Decision acquireAll(List<KeyedLimit> limits, long cost) {
		Decision expected = this.memory.acquire(limits, cost);
		Decision actual = this.redis.acquire(limits, cost);
		assertThat(actual.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(actual.statuses()).as("%s cost %d at %d", limits, cost, this.clock.nowMicros())
			.isEqualTo(expected.statuses());
		return actual;
	}

	private List<LimitStatus> inspect(List<KeyedLimit> limits) {
		List<LimitStatus> expected = this.memory.inspect(limits);
		List<LimitStatus> actual = this.redis.inspect(limits);
		assertThat(actual).as("inspect %s at %d", limits, this.clock.nowMicros()).isEqualTo(expected);
		return actual;
	}

	/**
	 * Acquires on both backends, requires equal statuses, and returns Redis's decision
	 * with memory's as its pair for a release.
	 */
	private Decision acquire(KeyedLimit target, long cost) {
		Decision expected = this.memory.acquire(List.of(target), cost);
		Decision actual = this.redis.acquire(List.of(target), cost);
		assertThat(actual.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(actual.statuses()).as("%s cost %d", target.limit(), cost).isEqualTo(expected.statuses());
		assertThat(actual.leases()).hasSameSizeAs(expected.leases());
		if (!actual.leases().isEmpty()) {
			this.pairs.add(new Decision[] { actual, expected });
		}
		return actual;
	}

	private final List<Decision[]> pairs = new ArrayList<>();

	private void release(Decision decision) {
		for (Decision[] pair : this.pairs) {
			if (pair[0] == decision) {
				this.redis.release(pair[0]);
				this.memory.release(pair[1]);
				this.pairs.remove(pair);
				return;
			}
		}
		throw new IllegalArgumentException("not a decision of this test");
	}

	/** Inspects on both backends, requires equal statuses, and returns the remaining. */
	private long remaining(KeyedLimit target) {
		LimitStatus expected = this.memory.inspect(List.of(target)).get(0);
		LimitStatus actual = this.redis.inspect(List.of(target)).get(0);
		assertThat(actual).as("inspect %s", target.limit()).isEqualTo(expected);
		return actual.remaining();
	}

}
