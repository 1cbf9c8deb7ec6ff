package dev.ratelimit.core.memory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Threads hammering shared keys never get more than the bound. The clock is frozen so the
 * bound is exact.
 */
class InMemoryConcurrencyTest {

	private static final int THREADS = 8;

	private static final int CALLS_PER_THREAD = 20_000;

	private final ExecutorService executor = Executors.newFixedThreadPool(THREADS);

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
		.timeSource(new ManualTimeSource())
		.build();

	@AfterEach
	void stop() throws InterruptedException {
		this.executor.shutdownNow();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
	}

	@Test
	void eightThreadsOnOneKeyGetExactlyTheCapacity() throws Exception {
		KeyedLimit hot = new KeyedLimit("api", "hot", Limit.tokenBucket("1000/1m"));
		int allowed = hammer((thread) -> this.limiter.acquire(hot).isAllowed() ? 1 : 0);
		assertThat(allowed).isEqualTo(1000);
	}

	@Test
	void eightThreadsOnOneKeyGetExactlyTheCapacityThroughTryAcquire() throws Exception {
		KeyedLimit hot = new KeyedLimit("api", "hot-boolean", Limit.tokenBucket("1000/1m"));
		int allowed = hammer((thread) -> this.limiter.tryAcquire(hot, 1) ? 1 : 0);
		assertThat(allowed).isEqualTo(1000);
	}

	@Test
	void everyAlgorithmHoldsItsBoundUnderContention() throws Exception {
		for (Limit limit : List.of(Limit.leakyBucket("500/1m"), Limit.fixedWindow("500/1m"),
				Limit.slidingWindowLog("500/1m"), Limit.slidingWindowCounter("500/1m"))) {
			KeyedLimit hot = new KeyedLimit("api", "hot", limit);
			int allowed = hammer(
					(thread) -> this.limiter.acquire(hot, 1 + thread % 2).isAllowed() ? 1 + thread % 2 : 0);
			assertThat(allowed).as(limit.toString()).isBetween(499, 500);
		}
	}

	@Test
	void aGlobalLimitSharedByManyClientsIsDecidedTogetherWithEachClientsOwn() throws Exception {
		KeyedLimit global = new KeyedLimit("backend", "global", Limit.tokenBucket("3000/1m"));
		AtomicInteger perClientOverruns = new AtomicInteger();
		int allowed = hammer((thread) -> {
			KeyedLimit own = new KeyedLimit("api", "client-" + thread, Limit.tokenBucket("500/1m"));
			Decision decision = this.limiter.acquire(List.of(own, global), 1);
			return decision.isAllowed() ? 1 : 0;
		});
		for (int thread = 0; thread < THREADS; thread++) {
			KeyedLimit own = new KeyedLimit("api", "client-" + thread, Limit.tokenBucket("500/1m"));
			long used = 500 - this.limiter.inspect(List.of(own)).get(0).remaining();
			if (used > 500) {
				perClientOverruns.incrementAndGet();
			}
		}
		// 8 clients of 500 each could take 4000; the global limit holds them to 3000, and
		// nothing leaks.
		assertThat(allowed).isEqualTo(3000);
		assertThat(perClientOverruns).hasValue(0);
		assertThat(this.limiter.inspect(List.of(global)).get(0).remaining()).isZero();
	}

	@Test
	void threadsFlippingOneClientBetweenTiersOfOtherAlgorithmsNeitherWaitForEachOtherNorOverAdmit() throws Exception {
		Limit window = Limit.fixedWindow("600/1m");
		Limit bucket = Limit.tokenBucket("1000/1m");
		KeyedLimit free = new KeyedLimit("api", "flipper", "fixed-window", window,
				List.of(new KeyedLimit.Counterpart("token-bucket", bucket)));
		KeyedLimit paid = new KeyedLimit("api", "flipper", "token-bucket", bucket,
				List.of(new KeyedLimit.Counterpart("fixed-window", window)));
		AtomicInteger onFree = new AtomicInteger();
		AtomicInteger onPaid = new AtomicInteger();
		// each call takes the other tier's state as a counterpart while another thread
		// may hold it: no call waits for a lock while it holds one
		hammer((thread) -> {
			boolean toFree = ThreadLocalCounter.next() % 2 == thread % 2;
			boolean allowed = toFree ? this.limiter.acquire(free).isAllowed() : this.limiter.tryAcquire(paid, 1);
			if (allowed) {
				(toFree ? onFree : onPaid).incrementAndGet();
			}
			return allowed ? 1 : 0;
		});
		// the paid tier takes over what the free tier spent when it first decides, if
		// anything
		assertThat(onFree.get()).isLessThanOrEqualTo(600);
		assertThat(onPaid.get()).isLessThanOrEqualTo(1000);
		assertThat(this.limiter.inspect(List.of(free, paid)))
			.allSatisfy((status) -> assertThat(status.remaining()).isZero());
	}

	/** Counts each thread's calls. */
	private static final class ThreadLocalCounter {

		private static final ThreadLocal<int[]> CALLS = ThreadLocal.withInitial(() -> new int[1]);

		static int next() {
			return CALLS.get()[0]++;
		}

	}

	@Test
	void concurrencyPermitsNeverExceedMax() throws Exception {
		KeyedLimit uploads = new KeyedLimit("uploads", "alice", Limit.concurrency(3));
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger peak = new AtomicInteger();
		int admitted = hammer((thread) -> {
			Decision decision = this.limiter.acquire(uploads);
			if (!decision.isAllowed()) {
				return 0;
			}
			int now = inFlight.incrementAndGet();
			peak.accumulateAndGet(now, Math::max);
			Thread.onSpinWait();
			inFlight.decrementAndGet();
			this.limiter.release(decision);
			return 1;
		});
		assertThat(peak.get()).isBetween(1, 3);
		assertThat(admitted).isGreaterThan(THREADS);
		assertThat(this.limiter.inspect(List.of(uploads)).get(0).remaining()).isEqualTo(3);
	}

	private int hammer(Call call) throws Exception {
		CyclicBarrier start = new CyclicBarrier(THREADS);
		List<Future<Integer>> results = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			int thread = t;
			Callable<Integer> worker = () -> {
				start.await();
				int sum = 0;
				for (int i = 0; i < CALLS_PER_THREAD; i++) {
					sum += call.run(thread);
				}
				return sum;
			};
			results.add(this.executor.submit(worker));
		}
		int total = 0;
		for (Future<Integer> result : results) {
			total += result.get(60, TimeUnit.SECONDS);
		}
		return total;
	}

	@FunctionalInterface
	interface Call {

		int run(int thread);

	}

}
