package dev.ratelimit.core.memory;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Evicting a key never loses nor counts twice the permits of a call deciding on it at the
 * same moment: with a clock that stands still (nothing refills, nothing expires), every
 * permit ever allowed is either still spent in a state held or was handed back by an
 * eviction, exactly.
 */
class EvictionRaceTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final ExecutorService executor = Executors.newFixedThreadPool(4);

	@AfterEach
	void stop() throws InterruptedException {
		this.executor.shutdownNow();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
	}

	@Test
	void aCallThatFoundItsSlotBeforeAnEvictionTakesItsPermitFromTheNextSlot() {
		Runnable[] onNextRead = new Runnable[1];
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().maxKeys(2).sweeper(Runnable::run).timeSource(() -> {
			Runnable hook = onNextRead[0];
			onNextRead[0] = null;
			if (hook != null) {
				hook.run();
			}
			return this.clock.nowMicros();
		}).build();
		Limit limit = Limit.tokenBucket("10/1d");
		KeyedLimit spent = new KeyedLimit("api", "spent", limit);
		KeyedLimit client = new KeyedLimit("api", "client", limit);
		KeyedLimit newcomer = new KeyedLimit("api", "newcomer", limit);
		assertThat(limiter.acquire(spent, 10).isAllowed()).isTrue();
		assertThat(limiter.acquire(client).isAllowed()).isTrue();
		// While the client's next call reads the time, a newcomer that spends all its
		// permits takes the store past
		// its bound, and the client's key, nearest to fresh, is evicted under that call.
		onNextRead[0] = () -> assertThat(limiter.acquire(newcomer, 10).isAllowed()).isTrue();
		assertThat(limiter.acquire(client).isAllowed()).isTrue();
		assertThat(onNextRead[0]).as("the eviction ran inside the call").isNull();
		assertThat(limiter.evictedSpentKeys()).isPositive();
		assertThat(spentIn(limiter, List.of(spent, client, newcomer)) + limiter.permitsHandedBack())
			.isEqualTo(10 + 1 + 1 + 10);
	}

	@Test
	void everyPermitAllowedWhileFourThreadsForceEvictionsIsHeldOrHandedBackOnce() throws Exception {
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
			.maxKeys(64)
			.sweeper(Runnable::run)
			.timeSource(this.clock)
			.build();
		List<KeyedLimit> keys = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			Limit limit = switch (i % 3) {
				case 0 -> Limit.fixedWindow("20/1d");
				case 1 -> Limit.slidingWindowLog("20/1d");
				default -> Limit.concurrency(20);
			};
			keys.add(new KeyedLimit("api", "k-" + i, limit));
		}
		CyclicBarrier start = new CyclicBarrier(4);
		List<Future<Long>> results = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			long seed = t;
			Callable<Long> worker = () -> {
				SplittableRandom random = new SplittableRandom(seed);
				start.await();
				long permits = 0;
				for (int i = 0; i < 30_000; i++) {
					KeyedLimit key = keys.get(random.nextInt(keys.size()));
					switch (random.nextInt(3)) {
						case 0 -> permits += limiter.acquire(key).isAllowed() ? 1 : 0;
						case 1 -> {
							KeyedLimit other = keys.get(random.nextInt(keys.size()));
							Decision decision = limiter.acquire(List.of(key, other), 1);
							permits += decision.isAllowed() ? (key.equals(other) ? 1 : 2) : 0;
						}
						default ->
							permits += (key.limit().algorithm() != Algorithm.CONCURRENCY && limiter.tryAcquire(key, 1))
									? 1 : 0;
					}
				}
				return permits;
			};
			results.add(this.executor.submit(worker));
		}
		long allowed = 0;
		for (Future<Long> result : results) {
			allowed += result.get(120, TimeUnit.SECONDS);
		}
		assertThat(limiter.evictedSpentKeys()).as("evictions while the threads ran").isGreaterThan(100);
		assertThat(spentIn(limiter, keys) + limiter.permitsHandedBack()).isEqualTo(allowed);
	}

	/** The permits spent in the states held (a key not held reads as fresh: none). */
	private static long spentIn(InMemoryRateLimiter limiter, List<KeyedLimit> keys) {
		long spent = 0;
		for (KeyedLimit key : keys) {
			spent += key.limit().capacity() - limiter.inspect(List.of(key)).get(0).remaining();
		}
		return spent;
	}

}
