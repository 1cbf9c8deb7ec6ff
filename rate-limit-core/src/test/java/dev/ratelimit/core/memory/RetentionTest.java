package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key's state is kept while it is in use: its retention runs from its last call, not
 * from its creation.
 */
class RetentionTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	@Test
	void aKeyInUseIsNotForgottenOneRetentionAfterItWasCreated() {
		// 5/s, capacity 10: a retention of 2 s.
		KeyedLimit key = new KeyedLimit("p", "k", Limit.tokenBucket("5/1s", 10));
		this.limiter.acquire(key, 5);
		for (int i = 0; i < 8; i++) {
			this.clock.advance(Duration.ofMillis(100));
			this.limiter.acquire(key, 1);
		}
		// 1 token left at 0.8 s; 1.35 s later, 1 + 6.75 tokens. Created 2.15 s ago, last
		// used 1.35 s ago.
		this.clock.advance(Duration.ofMillis(1300));
		this.limiter.acquire(new KeyedLimit("p", "other", Limit.tokenBucket("5/1s", 10)));
		this.limiter.cleanUp();
		this.clock.advance(Duration.ofMillis(50));
		this.limiter.cleanUp();
		assertThat(this.limiter.inspect(List.of(key)).get(0).remaining()).isEqualTo(7);
	}

	@Test
	void aChangedLimitKeepsTheKeyForItsOwnRetention() {
		// 10/s: a retention of 1 s; 10/h: an hour
		this.limiter.acquire(new KeyedLimit("p", "k", Limit.tokenBucket("10/1s")), 10);
		KeyedLimit slower = new KeyedLimit("p", "k", Limit.tokenBucket("10/1h"));
		assertThat(this.limiter.acquire(slower).isAllowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(5));
		this.limiter.cleanUp();
		assertThat(this.limiter.keyCount()).isOne();
		assertThat(this.limiter.inspect(List.of(slower)).get(0).remaining()).isZero();
		for (KeyedLimit faster : List.of(new KeyedLimit("p", "k", Limit.tokenBucket("10/1s")),
				new KeyedLimit("p", "j", Limit.tokenBucket("10/1s")))) {
			this.limiter.acquire(faster);
		}
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(this.limiter.keyCount()).isZero();
	}

	@Test
	void theKeyCountForgetsIdleKeysWithoutAnotherCall() {
		// 5/s, capacity 10: a retention of 2 s, plus up to half of it (see the class
		// description)
		this.limiter.acquire(new KeyedLimit("p", "a", Limit.tokenBucket("5/1s", 10)));
		this.limiter.acquire(new KeyedLimit("p", "b", Limit.tokenBucket("5/1s", 10)));
		assertThat(this.limiter.keyCount()).isEqualTo(2);
		this.clock.advance(Duration.ofSeconds(4));
		assertThat(this.limiter.keyCount()).isZero();
	}

	@Test
	void aSlidingLogInUseKeepsItsEntries() {
		KeyedLimit key = new KeyedLimit("p", "k", Limit.slidingWindowLog("5/1s"));
		for (int i = 0; i < 5; i++) {
			this.limiter.acquire(key);
			this.clock.advance(Duration.ofMillis(300));
			this.limiter.cleanUp();
		}
		// Calls at 0, 0.3, 0.6, 0.9, 1.2 s; now 1.5 s: the last three are still inside
		// the window.
		assertThat(this.limiter.inspect(List.of(key)).get(0).remaining()).isEqualTo(2);
	}

	@Test
	void aConcurrencyLeaseIsKeptForItsWholeLeaseTime() {
		KeyedLimit key = new KeyedLimit("p", "k", Limit.concurrency(2));
		this.limiter.acquire(key);
		for (int i = 0; i < 50; i++) {
			this.clock.advance(Duration.ofSeconds(1));
			this.limiter.inspect(List.of(key));
			this.limiter.acquire(new KeyedLimit("p", "other-" + i, Limit.concurrency(2)));
			this.limiter.cleanUp();
		}
		assertThat(this.limiter.inspect(List.of(key)).get(0).remaining()).isEqualTo(1);
	}

	@Test
	void aLateReleaseOfAForgottenLeaseDoesNotFreeSomeoneElsesPermit() {
		KeyedLimit key = new KeyedLimit("p", "k",
				Limit.builder(dev.ratelimit.core.Algorithm.CONCURRENCY)
					.max(1)
					.leaseTime(Duration.ofSeconds(1))
					.build());
		dev.ratelimit.core.Decision lost = this.limiter.acquire(key);
		// The holder never releases; its lease expires and the idle key is dropped.
		this.clock.advance(Duration.ofSeconds(5));
		this.limiter.cleanUp();
		dev.ratelimit.core.Decision current = this.limiter.acquire(key);
		assertThat(current.isAllowed()).isTrue();
		this.limiter.release(lost);
		assertThat(this.limiter.acquire(key).isAllowed()).isFalse();
		this.limiter.release(current);
		assertThat(this.limiter.acquire(key).isAllowed()).isTrue();
	}

}
