package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holding the limiter to {@code max-keys} never hands a client back the permits it spent
 * while some key held carries no information, and then only from the keys nearest to
 * their fresh state. The clock stands still unless a test moves it, so that no permit
 * comes back by itself.
 */
class KeyFloodTest {

	private static final int MAX_KEYS = 1000;

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
		.maxKeys(MAX_KEYS)
		.sweeper(Runnable::run)
		.timeSource(this.clock)
		.build();

	static Stream<Arguments> families() {
		return Stream.of(family("token bucket", Limit.tokenBucket("10/1d")),
				family("fixed window", Limit.fixedWindow("10/1d")),
				family("sliding window counter", Limit.slidingWindowCounter("10/1d")),
				family("sliding window log", Limit.slidingWindowLog("10/1d")),
				family("concurrency, permits in flight", Limit.concurrency(10)));
	}

	private static Arguments family(String name, Limit limit) {
		return Arguments.of(Named.of(name, limit));
	}

	@ParameterizedTest
	@MethodSource("families")
	void aClientThatSpentItsQuotaGetsNothingBackFromAFloodOfTenTimesMaxKeysNewKeys(Limit limit) {
		// Concurrency permits are never released here: each key's are in flight for the
		// whole test.
		oneCallEach("before", 3 * MAX_KEYS, limit);
		KeyedLimit client = new KeyedLimit("api", "client", limit);
		assertThat(allowedOf(client, 20)).isEqualTo(10);
		oneCallEach("flood", 10 * MAX_KEYS, limit);
		assertThat(allowedOf(client, 20)).as("permits handed back to the client").isZero();
		// each one-off key spent a tenth of its limit: the flood evicted as many of them
		// as it added
		assertThat(this.limiter.evictedSpentKeys()).isGreaterThanOrEqualTo(12 * MAX_KEYS);
		assertThat(this.limiter.keyCount()).isBetween((long) MAX_KEYS - MAX_KEYS / 16, (long) MAX_KEYS);
	}

	@Test
	void aFloodFasterThanTheSweepsNeverMakesACallWaitKeepsMemoryBoundedAndHandsAnExhaustedClientNothing() {
		// the sweeps are queued here and run only when the test says: as if the sweeper
		// could not keep up
		List<Runnable> queued = new ArrayList<>();
		InMemoryRateLimiter lagging = InMemoryRateLimiter.builder()
			.maxKeys(100)
			.sweeper(queued::add)
			.timeSource(this.clock)
			.build();
		Limit limit = Limit.fixedWindow("10/1d");
		KeyedLimit client = new KeyedLimit("api", "client", limit);
		for (int i = 0; i < 10; i++) {
			assertThat(lagging.acquire(client).isAllowed()).isTrue();
		}
		for (int i = 0; i < 1000; i++) {
			lagging.acquire(new KeyedLimit("api", "flood-" + i, limit));
		}
		assertThat(queued).as("one sweep queued, none run by a caller").hasSize(1);
		assertThat(lagging.keyCount()).as("held, at most max-keys + max-keys/16").isLessThanOrEqualTo(106);
		assertThat(lagging.acquire(client).isAllowed()).as("the exhausted client").isFalse();
		// the keys not kept are counted as evicted with what they spent
		assertThat(lagging.evictedSpentKeys()).isEqualTo(1000 - (106 - 1));
		queued.remove(0).run();
		assertThat(lagging.keyCount()).isLessThanOrEqualTo(100);
		assertThat(lagging.acquire(client).isAllowed()).as("the exhausted client, after the sweep").isFalse();
	}

	@Test
	void aStoreLeftFullWhenNoSweepCouldStartStartsOneAtTheNextKeyItCannotKeep() {
		// the sweeper refuses sweeps (shut down, say) until the store is full, then runs
		// them
		AtomicBoolean accepting = new AtomicBoolean();
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().maxKeys(16).sweeper((sweep) -> {
			if (!accepting.get()) {
				throw new RejectedExecutionException("not yet");
			}
			sweep.run();
		}).timeSource(this.clock).build();
		Limit limit = Limit.fixedWindow("10/1d");
		for (int i = 0; i < 20; i++) {
			limiter.acquire(new KeyedLimit("api", "early-" + i, limit));
		}
		assertThat(limiter.storedKeys()).as("full: max-keys + max-keys/16").isEqualTo(17);
		accepting.set(true);
		limiter.acquire(new KeyedLimit("api", "late", limit));
		assertThat(limiter.storedKeys()).as("swept").isLessThanOrEqualTo(16);
		KeyedLimit kept = new KeyedLimit("api", "kept", limit);
		limiter.acquire(kept, 4);
		assertThat(remaining(limiter, kept)).isEqualTo(6);
	}

	@Test
	void keysBackToFreshGoBeforeAnyKeyThatStillHoldsSpentPermits() {
		// 1000 keys in use a moment ago: a second later their buckets are full again, yet
		// not past their retention.
		oneCallEach("idle", MAX_KEYS, Limit.tokenBucket("1000/1s"));
		this.clock.advance(Duration.ofMillis(1100));
		KeyedLimit client = new KeyedLimit("api", "client", Limit.tokenBucket("10/1d"));
		assertThat(allowedOf(client, 20)).isEqualTo(10);
		oneCallEach("newcomer", MAX_KEYS - 1, Limit.tokenBucket("10/1d"));
		assertThat(allowedOf(client, 20)).as("permits handed back to the client").isZero();
		for (int i = 0; i < MAX_KEYS - 1; i++) {
			assertThat(remaining(this.limiter, new KeyedLimit("api", "newcomer-" + i, Limit.tokenBucket("10/1d"))))
				.as("newcomer %d", i)
				.isEqualTo(9);
		}
		assertThat(this.limiter.evictedFreshKeys()).isEqualTo(MAX_KEYS);
		assertThat(this.limiter.evictedSpentKeys()).isZero();
	}

	@Test
	void whenEveryKeyStillHoldsSpentPermitsTheKeysNearestToFreshGoFirst() {
		InMemoryRateLimiter small = InMemoryRateLimiter.builder()
			.maxKeys(100)
			.sweeper(Runnable::run)
			.timeSource(this.clock)
			.build();
		Limit limit = Limit.tokenBucket("10/1d");
		// Ten keys at each level: key i spent 1 + i % 10 of its 10 permits.
		List<KeyedLimit> keys = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			KeyedLimit key = new KeyedLimit("api", "k-" + i, limit);
			assertThat(small.acquire(key, 1 + i % 10).isAllowed()).isTrue();
			keys.add(key);
		}
		KeyedLimit newcomer = new KeyedLimit("api", "newcomer", limit);
		assertThat(small.acquire(newcomer, 10).isAllowed()).isTrue();
		// Over max-keys: the bound goes back to 100 - 100 / 16 = 94 keys, so 7 go, all of
		// them keys that spent 1.
		int evicted = 0;
		for (int i = 0; i < 100; i++) {
			long remaining = remaining(small, keys.get(i));
			long spent = 1 + i % 10;
			if (remaining == 10) {
				assertThat(spent).as("spent permits of an evicted key").isEqualTo(1);
				evicted++;
			}
			else {
				assertThat(remaining).isEqualTo(10 - spent);
			}
		}
		assertThat(evicted).isEqualTo(7);
		assertThat(remaining(small, newcomer)).isZero();
		assertThat(small.evictedSpentKeys()).isEqualTo(7);
		assertThat(small.evictedFreshKeys()).isZero();
		assertThat(small.permitsHandedBack()).isEqualTo(7);
	}

	@Test
	void keysOfDifferentLimitsCompareByTheShareOfTheirCapacityHandedBack() {
		InMemoryRateLimiter small = InMemoryRateLimiter.builder()
			.maxKeys(4)
			.sweeper(Runnable::run)
			.timeSource(this.clock)
			.build();
		KeyedLimit halfOfTen = spend(small, "b", Limit.tokenBucket("10/1d"), 5);
		KeyedLimit allOfTwo = spend(small, "c", Limit.fixedWindow("2/1d"), 2);
		KeyedLimit tenthOfAHundred = spend(small, "a", Limit.tokenBucket("100/1d"), 10);
		KeyedLimit threeOfFour = spend(small, "d", Limit.concurrency(4), 3);
		// A fifth key: one key goes, the one that gets back the smallest share of its
		// limit (10 of 100 permits, more
		// permits than any other would get back, but a tenth of its limit).
		KeyedLimit nineOfTen = spend(small, "e", Limit.tokenBucket("10/1d"), 9);
		assertThat(remaining(small, tenthOfAHundred)).isEqualTo(100);
		assertThat(remaining(small, halfOfTen)).isEqualTo(5);
		assertThat(remaining(small, allOfTwo)).isZero();
		assertThat(remaining(small, threeOfFour)).isEqualTo(1);
		assertThat(remaining(small, nineOfTen)).isEqualTo(1);
	}

	@Test
	void ofKeysThatSpentTheSameShareTheOneNearestToFullGoesFirst() {
		InMemoryRateLimiter small = InMemoryRateLimiter.builder()
			.maxKeys(2)
			.sweeper(Runnable::run)
			.timeSource(this.clock)
			.build();
		KeyedLimit fullInAMinute = spend(small, "minute", Limit.tokenBucket("10/1m"), 10);
		KeyedLimit fullInAnHour = spend(small, "hour", Limit.tokenBucket("10/1h"), 10);
		KeyedLimit fullInADay = spend(small, "day", Limit.tokenBucket("10/1d"), 10);
		assertThat(remaining(small, fullInAMinute)).isEqualTo(10);
		assertThat(remaining(small, fullInAnHour)).isZero();
		assertThat(remaining(small, fullInADay)).isZero();
	}

	@Test
	void readsThroughInspectDoNotChangeWhichKeysAreEvicted() {
		Limit limit = Limit.tokenBucket("10/1d");
		InMemoryRateLimiter read = InMemoryRateLimiter.builder()
			.maxKeys(100)
			.sweeper(Runnable::run)
			.timeSource(this.clock)
			.build();
		InMemoryRateLimiter unread = InMemoryRateLimiter.builder()
			.maxKeys(100)
			.sweeper(Runnable::run)
			.timeSource(this.clock)
			.build();
		List<KeyedLimit> keys = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			KeyedLimit key = new KeyedLimit("api", "k-" + i, limit);
			keys.add(key);
			long cost = 1 + i % 10;
			// An endpoint that reads a key before and after its call, as often as a
			// caller likes.
			for (int reads = 0; reads < 20; reads++) {
				read.inspect(List.of(key));
			}
			assertThat(read.acquire(key, cost).isAllowed()).isTrue();
			assertThat(unread.acquire(key, cost).isAllowed()).isTrue();
			for (int reads = 0; reads < 20; reads++) {
				read.inspect(List.of(key));
			}
		}
		assertThat(keys)
			.allSatisfy((key) -> assertThat(remaining(read, key)).as(key.key()).isEqualTo(remaining(unread, key)));
	}

	@Test
	void readsThroughInspectDoNotKeepAnIdleKey() {
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();
		// 5/s, capacity 10: a retention of 2 s, plus up to half of it.
		KeyedLimit key = new KeyedLimit("api", "k", Limit.tokenBucket("5/1s", 10));
		limiter.acquire(key, 10);
		this.clock.advance(Duration.ofMillis(2500));
		assertThat(limiter.inspect(List.of(key)).get(0).remaining()).isEqualTo(10);
		// Caffeine expires entries in timer-wheel buckets of about a second, so removal
		// may lag a little.
		this.clock.advance(Duration.ofMillis(500 + 1100));
		assertThat(limiter.keyCount()).isZero();
	}

	private void oneCallEach(String prefix, int count, Limit limit) {
		for (int i = 0; i < count; i++) {
			assertThat(this.limiter.acquire(new KeyedLimit("api", prefix + "-" + i, limit)).isAllowed()).isTrue();
		}
	}

	private int allowedOf(KeyedLimit client, int calls) {
		int allowed = 0;
		for (int i = 0; i < calls; i++) {
			Decision decision = this.limiter.acquire(client);
			if (decision.isAllowed()) {
				allowed++;
			}
		}
		return allowed;
	}

	/**
	 * A key that spent some permits; a concurrency limit's are in flight, one lease each.
	 */
	private static KeyedLimit spend(InMemoryRateLimiter limiter, String key, Limit limit, long permits) {
		KeyedLimit keyed = new KeyedLimit("api", key, limit);
		if (limit.algorithm() == Algorithm.CONCURRENCY) {
			for (int i = 0; i < permits; i++) {
				assertThat(limiter.acquire(keyed).isAllowed()).isTrue();
			}
		}
		else {
			assertThat(limiter.acquire(keyed, permits).isAllowed()).isTrue();
		}
		return keyed;
	}

	private static long remaining(InMemoryRateLimiter limiter, KeyedLimit key) {
		return limiter.inspect(List.of(key)).get(0).remaining();
	}

}
