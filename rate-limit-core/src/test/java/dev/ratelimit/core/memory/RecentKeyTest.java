package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key last added or shown to Caffeine is decided without the look-up, but never on a
 * slot that the limiter no longer holds: a reset, expired or evicted key comes back
 * fresh, as it does for any other key.
 */
class RecentKeyTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	@Test
	void aResetKeyComesBackFreshWhenItWasTheKeyLastShownToCaffeine() {
		// 5/s, capacity 10: a retention of 2 s, so a key in use is shown to Caffeine at
		// least once a second.
		KeyedLimit key = new KeyedLimit("p", "k", Limit.tokenBucket("5/1s", 10));
		assertThat(this.limiter.tryAcquire(key, 1)).isTrue();
		this.clock.advance(Duration.ofMillis(1100));
		assertThat(this.limiter.tryAcquire(key, 10)).isTrue();
		assertThat(this.limiter.tryAcquire(key, 1)).isFalse();
		this.limiter.reset(key);
		assertThat(takeAll(key)).isEqualTo(10);
	}

	@Test
	void aCallInFlightDuringAResetDoesNotBringTheOldStateBack() {
		// The reset lands while a call that already found the key's slot reads the time;
		// that call is due to show
		// the key to Caffeine (a retention of 2 s: every second), which puts a slot back
		// if Caffeine lost it.
		Runnable[] onNextRead = new Runnable[1];
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(() -> {
			Runnable hook = onNextRead[0];
			onNextRead[0] = null;
			if (hook != null) {
				hook.run();
			}
			return this.clock.nowMicros();
		}).build();
		KeyedLimit key = new KeyedLimit("p", "k", Limit.tokenBucket("5/1s", 10));
		assertThat(limiter.tryAcquire(key, 10)).isTrue();
		this.clock.advance(Duration.ofMillis(1100));
		onNextRead[0] = () -> limiter.reset(key);
		assertThat(limiter.tryAcquire(key, 1)).isTrue();
		assertThat(onNextRead[0]).as("the reset ran inside the call").isNull();
		// the call decided on the state the reset discarded; what follows sees a fresh
		// bucket, not 4 tokens
		int taken = 0;
		while (limiter.tryAcquire(key, 1)) {
			taken++;
		}
		assertThat(taken).isEqualTo(10);
	}

	@Test
	void aKeyCaffeineExpiredComesBackFreshWhenItWasTheKeyLastShownToCaffeine() {
		KeyedLimit key = emptiedAfterBeingShownThenIdleThreeDays();
		// Another key's first call moves Caffeine's clock on, and Caffeine expires the
		// idle key.
		this.limiter.tryAcquire(new KeyedLimit("p", "other", Limit.tokenBucket("5/1s")), 1);
		assertThat(this.limiter.tryAcquire(key, 1)).as("a fresh, empty bucket").isFalse();
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(takeAll(key)).isEqualTo(2);
	}

	@Test
	void aKeyCaffeineOnlyMarkedExpiredComesBackFreshWhenItWasTheKeyLastShownToCaffeine() {
		KeyedLimit key = emptiedAfterBeingShownThenIdleThreeDays();
		// Reading another key moves Caffeine's clock on without a write, so nothing is
		// evicted yet: the key is only
		// past its expiry, which Caffeine's own look-up would also see.
		this.limiter.inspect(List.of(new KeyedLimit("p", "other", Limit.tokenBucket("5/1s"))));
		assertThat(this.limiter.tryAcquire(key, 1)).as("a fresh, empty bucket").isFalse();
	}

	@Test
	void aKeyEvictedForSpaceComesBackFreshWhenItWasTheKeyLastAdded() {
		InMemoryRateLimiter small = InMemoryRateLimiter.builder()
			.timeSource(this.clock)
			.maxKeys(1)
			.sweeper(Runnable::run)
			.build();
		KeyedLimit spent = new KeyedLimit("p", "spent", Limit.tokenBucket("1/1h", 5));
		assertThat(small.tryAcquire(spent, 5)).isTrue();
		// The newcomer is added, held as the recent key, and at once evicted by the sweep
		// its addition starts: it
		// spent a hundredth of its limit, the other key all of its own.
		KeyedLimit newcomer = new KeyedLimit("p", "newcomer", Limit.tokenBucket("1/1h", 100));
		assertThat(small.tryAcquire(newcomer, 1)).isTrue();
		assertThat(small.keyCount()).isEqualTo(1);
		assertThat(small.evictedSpentKeys()).isEqualTo(1);
		assertThat(small.tryAcquire(spent, 1)).isFalse();
		// 100 fit a fresh bucket only, not the 99 left in the evicted one
		assertThat(small.tryAcquire(newcomer, 100)).as("the evicted newcomer, fresh").isTrue();
	}

	/**
	 * A bucket that starts empty and fills at 1/s up to 5, shown to Caffeine (half a
	 * retention after its first call) while emptied, then idle for three days. A fresh
	 * state (empty) differs from an old full one, so such a key is kept a day beyond its
	 * window, and forgotten after that.
	 */
	private KeyedLimit emptiedAfterBeingShownThenIdleThreeDays() {
		KeyedLimit key = new KeyedLimit("p", "k",
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("1/1s").capacity(5).initial(0).build());
		assertThat(this.limiter.tryAcquire(key, 1)).isFalse();
		this.clock.advance(Duration.ofHours(13));
		assertThat(this.limiter.tryAcquire(key, 5)).isTrue();
		this.clock.advance(Duration.ofDays(3));
		return key;
	}

	private int takeAll(KeyedLimit key) {
		int taken = 0;
		while (taken <= 100 && this.limiter.tryAcquire(key, 1)) {
			taken++;
		}
		return taken;
	}

}
