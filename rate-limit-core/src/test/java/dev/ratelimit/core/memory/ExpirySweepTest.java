package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key past its retention counts as absent at once and is taken out of the store by a
 * sweep: one that a key added starts in the background (at most once a second of the
 * store's time), a clean-up, or an eviction sweep.
 */
class ExpirySweepTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
		.timeSource(this.clock)
		.sweeper(Runnable::run)
		.build();

	// 10/s, capacity 10: a retention of 1 s, so a key idle for 1.5 s has expired.
	private final Limit limit = Limit.tokenBucket("10/1s", 10);

	@Test
	void aKeyAddedSweepsOutTheKeysPastTheirRetention() {
		this.limiter.acquire(key("a"), 10);
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(this.limiter.storedKeys()).isOne();
		this.limiter.acquire(key("b"));
		assertThat(this.limiter.storedKeys()).isOne();
		assertThat(this.limiter.keyCount()).isOne();
	}

	@Test
	void keysAddedStartABackgroundSweepAtMostOnceASecond() {
		// 100/s, capacity 10: a retention of 0.1 s, expired 0.15 s after its last call.
		Limit brief = Limit.tokenBucket("100/1s", 10);
		this.limiter.acquire(new KeyedLimit("p", "a", brief));
		this.clock.advance(Duration.ofMillis(200));
		this.limiter.acquire(new KeyedLimit("p", "b", brief));
		assertThat(this.limiter.storedKeys()).as("a swept out as b was added").isOne();
		this.clock.advance(Duration.ofMillis(500));
		this.limiter.acquire(new KeyedLimit("p", "c", brief));
		assertThat(this.limiter.storedKeys()).as("b expired, but the last sweep was 0.5 s ago").isEqualTo(2);
		this.clock.advance(Duration.ofMillis(500));
		this.limiter.acquire(new KeyedLimit("p", "d", brief));
		assertThat(this.limiter.storedKeys()).as("b and c swept out a second after the last sweep").isOne();
	}

	@Test
	void aKeyPastItsRetentionComesBackFreshInPlaceOfItsExpiredSlot() {
		KeyedLimit a = key("a");
		this.limiter.acquire(a, 10);
		this.clock.advance(Duration.ofSeconds(2));
		// no sweep has run: the expired slot is still in the store, and is replaced
		assertThat(this.limiter.storedKeys()).isOne();
		assertThat(this.limiter.acquire(a, 4).remaining()).isEqualTo(6);
		assertThat(this.limiter.acquire(key("a"), 1).remaining()).isEqualTo(5);
		assertThat(this.limiter.storedKeys()).isOne();
	}

	@Test
	void aKeyWhoseChangedLimitShortensItsRetentionIsSweptOutOnTheNewOne() {
		// 10/h: a retention of an hour; 10/s: a second
		this.limiter.acquire(new KeyedLimit("p", "k", Limit.tokenBucket("10/1h")), 10);
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(this.limiter.keyCount()).isOne();
		this.limiter.acquire(key("k"));
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(this.limiter.keyCount()).isZero();
	}

	@Test
	void anExpiredKeyIsNotCountedAndAKeyInUseNeverExpires() {
		KeyedLimit busy = key("busy");
		this.limiter.acquire(key("idle"), 3);
		for (int i = 0; i < 40; i++) {
			this.clock.advance(Duration.ofMillis(100));
			this.limiter.acquire(busy);
		}
		assertThat(this.limiter.keyCount()).isOne();
		assertThat(this.limiter.inspect(List.of(busy)).get(0).remaining()).isEqualTo(9);
	}

	@Test
	void sweepsRacingCallsNeverHandAKeyInUseItsPermitsBack() throws Exception {
		KeyedLimit busy = key("busy");
		AtomicLong allowed = new AtomicLong();
		AtomicLong attempts = new AtomicLong();
		AtomicBoolean done = new AtomicBoolean();
		CountDownLatch started = new CountDownLatch(2);
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			List<Future<?>> callers = new ArrayList<>();
			for (int t = 0; t < 2; t++) {
				callers.add(threads.submit(() -> {
					started.countDown();
					while (!done.get()) {
						if (this.limiter.tryAcquire(busy, 1)) {
							allowed.incrementAndGet();
						}
						attempts.incrementAndGet();
					}
				}));
			}
			started.await();
			// 10 s of store time in steps of 5 ms: keys added and expiring all along,
			// each step adding one that starts a background sweep when one is due.
			for (int step = 0; step < 2000; step++) {
				this.clock.advance(Duration.ofMillis(5));
				this.limiter.acquire(key("other-" + step));
				// both callers see each step
				long seen = attempts.get();
				while (attempts.get() < seen + 4) {
					Thread.onSpinWait();
				}
				if (step % 50 == 0) {
					this.limiter.cleanUp();
				}
			}
			done.set(true);
			for (Future<?> caller : callers) {
				caller.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
		// the capacity, and 10 permits a second for 10 s: a slot swept out while in use
		// would come back full
		assertThat(allowed.get()).isBetween(100L, 110L);
	}

	private KeyedLimit key(String client) {
		return new KeyedLimit("p", client, this.limit);
	}

}
