package dev.ratelimit.benchmarks;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

/**
 * A million clients, each call from a random one: the cost of finding a key's state among
 * many (cache misses dominate) and of creating state for a key seen for the first time.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms3g", "-Xmx3g" })
@Threads(1)
public class ManyKeys {

	/*
	 * The same work on both sides: ours is called as an application calls it, with a
	 * KeyedLimit made for the request; Bucket4j keeps one bucket per client in a
	 * ConcurrentHashMap, created with computeIfAbsent and sharing one Bandwidth. Both
	 * stores hold every key before measuring, so the measurement sees the steady state.
	 * Allowed path: each key has the paid tier of the mission, 1000 per minute, and is
	 * called about once a second. Rejected path: each key holds one permit per hour,
	 * taken by the fill.
	 */
	static final String POLICY = "api";

	/**
	 * What both sides share: the client names and the path.
	 */
	@State(Scope.Benchmark)
	public static class Clients {

		@Param({ "1000000" })
		public int keys;

		@Param({ "allowed", "rejected" })
		public String path;

		String[] names;

		Limit limit;

		Bandwidth bandwidth;

		@Setup
		public void setUp() {
			this.names = new String[this.keys];
			for (int i = 0; i < this.keys; i++) {
				this.names[i] = "client-" + i;
			}
			boolean allowed = Path.of(this.path) == Path.ALLOWED;
			long perPeriod = allowed ? 1000 : 1;
			this.limit = Limit.tokenBucket(perPeriod + (allowed ? "/1m" : "/1h"), perPeriod);
			this.bandwidth = Bandwidth.builder()
				.capacity(perPeriod)
				.refillGreedy(perPeriod, allowed ? java.time.Duration.ofMinutes(1) : java.time.Duration.ofHours(1))
				.build();
		}

	}

	/**
	 * Our limiter, filled with every client.
	 */
	@State(Scope.Benchmark)
	public static class Ours {

		InMemoryRateLimiter limiter;

		@Setup
		public void setUp(Clients clients) {
			this.limiter = InMemoryRateLimiter.builder().maxKeys(Math.max(clients.keys, 1)).build();
			for (String name : clients.names) {
				this.limiter.acquire(new KeyedLimit(POLICY, name, clients.limit));
			}
		}

	}

	/**
	 * Bucket4j buckets in a map, filled with every client.
	 */
	@State(Scope.Benchmark)
	public static class Bucket4j {

		final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

		Bandwidth bandwidth;

		@Setup
		public void setUp(Clients clients) {
			this.bandwidth = clients.bandwidth;
			for (String name : clients.names) {
				bucket(name).tryConsume(1);
			}
		}

		Bucket bucket(String name) {
			return this.buckets.computeIfAbsent(name, (key) -> Bucket.builder().addLimit(this.bandwidth).build());
		}

	}

	/**
	 * Each thread's own random sequence of clients (xorshift, so that no shared generator
	 * is measured).
	 */
	@State(Scope.Thread)
	public static class Cursor {

		private long seed = System.nanoTime() | 1;

		int next(int bound) {
			long x = this.seed;
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			this.seed = x;
			return (int) ((x >>> 1) % bound);
		}

	}

	@Benchmark
	public Decision ours(Clients clients, Ours ours, Cursor cursor) {
		String name = clients.names[cursor.next(clients.keys)];
		return ours.limiter.acquire(new KeyedLimit(POLICY, name, clients.limit));
	}

	/**
	 * Ours answering the same boolean as Bucket4j's {@code tryConsume}:
	 * {@code InMemoryRateLimiter.tryAcquire}.
	 */
	@Benchmark
	public boolean oursTryAcquire(Clients clients, Ours ours, Cursor cursor) {
		String name = clients.names[cursor.next(clients.keys)];
		return ours.limiter.tryAcquire(new KeyedLimit(POLICY, name, clients.limit), 1);
	}

	@Benchmark
	public boolean bucket4j(Clients clients, Bucket4j bucket4j, Cursor cursor) {
		String name = clients.names[cursor.next(clients.keys)];
		return bucket4j.bucket(name).tryConsume(1);
	}

}
