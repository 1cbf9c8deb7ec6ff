package dev.ratelimit.benchmarks.reliability;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

/**
 * A flood of distinct keys, some of them 8 KB, through the in-memory limiter in this JVM
 * (run with a fixed heap), while clients it has exhausted keep asking and a normal client
 * keeps deciding. The heap should stay bounded once {@code max-keys} keys are held, no
 * exhausted client should be given permits back (its state evicted and recreated full),
 * and the normal client's decisions should stay fast.
 */
final class KeyFlood implements Scenario {

	/** One key in this many is 8 KB long. */
	private static final int LONG_KEY_EVERY = 1000;

	private static final int LONG_KEY_CHARS = 8192;

	private static final int EXHAUSTED_CLIENTS = 1000;

	/** The exhausted clients ask again this many times over the flood, evenly spread. */
	private static final int ROUNDS = 100;

	/**
	 * 6/1h: an exhausted client regains a permit only after ten minutes, longer than the
	 * flood lasts.
	 */
	private static final Limit LIMIT = Limit.tokenBucket("6/1h");

	private static final TokenBucketBound BOUND = new TokenBucketBound(6, 6, Duration.ofHours(1));

	@Override
	public void run(Settings settings, Processes processes, Figures figures) throws Exception {
		long keys = settings.pick(1_000_000L, 10_000_000L);
		long maxKeys = settings.pick(100_000L, 1_000_000L);
		long maxHeap = Runtime.getRuntime().maxMemory();
		figures.note(String.format("%,d distinct keys (one in %d of %,d characters) through an "
				+ "`InMemoryRateLimiter` with max-keys %,d, in a JVM with a %d MB heap; every key limited to 6/1h. "
				+ "%,d clients exhausted before the flood ask again %d times during it; a normal client decides "
				+ "in a thread of its own every 200 µs (its decision times, µs). Heap: used after `System.gc()`, "
				+ "at the start, half-way and at the end of the flood. `keys-held` (read at the end of the flood) has "
				+ "the documented ceiling, max-keys + max-keys / 16: sweeps run in the background, and while one "
				+ "catches up a new key is not kept.", keys, LONG_KEY_EVERY, LONG_KEY_CHARS, maxKeys, maxHeap >> 20,
				EXHAUSTED_CLIENTS, ROUNDS));
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().maxKeys(maxKeys).build();
		List<KeyedLimit> exhausted = new ArrayList<>();
		for (int i = 0; i < EXHAUSTED_CLIENTS; i++) {
			KeyedLimit client = new KeyedLimit("api", "exhausted-" + i, LIMIT);
			while (limiter.acquire(client).isAllowed()) {
				// taking its capacity
			}
			exhausted.add(client);
		}
		long exhaustedAt = System.nanoTime();
		long heapStart = heapAfterGc();
		NormalClient normal = new NormalClient(limiter);
		normal.start();
		long[] allowedAgain = new long[EXHAUSTED_CLIENTS];
		long heapHalf = 0;
		long every = keys / ROUNDS;
		String padding = "x".repeat(LONG_KEY_CHARS);
		long started = System.nanoTime();
		long pausedNanos = 0;
		for (long i = 0; i < keys; i++) {
			String key = (i % LONG_KEY_EVERY == LONG_KEY_EVERY - 1) ? i + padding.substring(Long.toString(i).length())
					: "flood-" + i;
			limiter.acquire(new KeyedLimit("api", key, LIMIT));
			if (i % every == every - 1) {
				for (int c = 0; c < EXHAUSTED_CLIENTS; c++) {
					if (limiter.acquire(exhausted.get(c)).isAllowed()) {
						allowedAgain[c]++;
					}
				}
			}
			if (i == keys / 2) {
				long paused = System.nanoTime();
				normal.pause(true);
				heapHalf = heapAfterGc();
				normal.pause(false);
				pausedNanos += System.nanoTime() - paused;
			}
		}
		double floodSeconds = (System.nanoTime() - started - pausedNanos) / 1e9;
		Percentiles decisions = normal.stop();
		long refill = BOUND.refill(Duration.ofNanos(System.nanoTime() - exhaustedAt));
		long handedBack = 0;
		for (long allowed : allowedAgain) {
			handedBack += Math.max(0, allowed - refill);
		}
		long heapEnd = heapAfterGc();
		long held = limiter.keyCount();

		String row = "flood";
		figures.add(row, "keys", keys);
		figures.add(row, "max-keys", maxKeys);
		// the documented ceiling: sweeps run in the background, and new keys stop at
		// max-keys + max-keys / 16
		figures.add(row, "keys-held", held, Target.atMost(maxKeys + maxKeys / 16));
		figures.add(row, "heap-start-mb", heapStart / 1e6);
		figures.add(row, "heap-half-mb", heapHalf / 1e6);
		figures.add(row, "heap-end-mb", heapEnd / 1e6);
		figures.add(row, "heap-growth-second-half-pct", 100.0 * (heapEnd - heapHalf) / heapHalf, Target.atMost(10));
		figures.add(row, "bytes-per-key-held", (heapEnd - heapStart) / (double) Math.max(1, held));
		figures.add(row, "handed-back", handedBack, Target.zero());
		figures.add(row, "normal-p99-us", decisions.at(99));
		figures.add(row, "normal-max-us", decisions.max());
		figures.add(row, "normal-decisions", decisions.count());
		figures.add(row, "flood-keys-per-s", keys / floodSeconds);
	}

	/**
	 * The heap in use after a full collection ({@code System.gc()}, twice, so that what
	 * the first found unreachable and finalizable is gone too).
	 */
	static long heapAfterGc() {
		System.gc();
		System.gc();
		return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
	}

	/**
	 * A client with a limit it never reaches, deciding in a thread of its own and timing
	 * each decision.
	 */
	private static final class NormalClient {

		private final InMemoryRateLimiter limiter;

		private final KeyedLimit client = new KeyedLimit("api", "normal", Limit.tokenBucket("100000000/1s"));

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final AtomicBoolean paused = new AtomicBoolean();

		private final List<Double> micros = new ArrayList<>();

		private final Thread thread = new Thread(this::decide, "normal-client");

		NormalClient(InMemoryRateLimiter limiter) {
			this.limiter = limiter;
		}

		void start() {
			this.thread.start();
		}

		private void decide() {
			while (this.running.get()) {
				if (!this.paused.get()) {
					long start = System.nanoTime();
					this.limiter.acquire(this.client);
					this.micros.add((System.nanoTime() - start) / 1e3);
				}
				LockSupport.parkNanos(200_000);
			}
		}

		void pause(boolean pause) {
			this.paused.set(pause);
			// let a decision under way finish before the collection starts
			Pause.millis(5);
		}

		Percentiles stop() throws InterruptedException {
			this.running.set(false);
			this.thread.join();
			return Percentiles.of(this.micros);
		}

	}

}
