package dev.ratelimit.benchmarks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;

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
import org.openjdk.jmh.annotations.Warmup;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

/**
 * One hot key, every thread calling it: the cost of a decision itself, and of contention
 * on one key's state. Every side does the same work: it finds the key's state by the key,
 * then decides.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
public abstract class OneKey {

	/*
	 * Ours looks the KeyedLimit up in its own bounded store (acquire(KeyedLimit)) and
	 * returns a full Decision (remaining, retry-after, reset-after). Each competitor
	 * looks its limiter up by the same key in a ConcurrentHashMap, as an application
	 * keeps one limiter per client with them, and returns only a boolean. oursTryAcquire
	 * is ours returning a boolean too, the same answer as the competitors'.
	 * bucket4jDirect skips the look-up and is shown for reference, not used in ratios.
	 */
	static final String POLICY = "api";

	static final String KEY = "client-1";

	@Param({ "allowed", "rejected" })
	public String path;

	private InMemoryRateLimiter ours;

	private KeyedLimit oursKey;

	private final Map<String, Bucket> bucket4j = new ConcurrentHashMap<>();

	private final Map<String, Bucket> bucket4jSynchronized = new ConcurrentHashMap<>();

	private Bucket bucket4jDirect;

	private final Map<String, io.github.resilience4j.ratelimiter.RateLimiter> resilience4j = new ConcurrentHashMap<>();

	private final Map<String, com.google.common.util.concurrent.RateLimiter> guava = new ConcurrentHashMap<>();

	@Setup
	public void setUp() {
		Path scenario = Path.of(this.path);
		this.ours = InMemoryRateLimiter.builder().build();
		this.oursKey = new KeyedLimit(POLICY, KEY, scenario.limit());
		this.bucket4j.put(KEY, Bucket.builder().addLimit(scenario.bandwidth()).build());
		this.bucket4jSynchronized.put(KEY,
				Bucket.builder()
					.addLimit(scenario.bandwidth())
					.withSynchronizationStrategy(SynchronizationStrategy.SYNCHRONIZED)
					.build());
		this.bucket4jDirect = Bucket.builder().addLimit(scenario.bandwidth()).build();
		this.resilience4j.put(KEY, io.github.resilience4j.ratelimiter.RateLimiter.of(KEY, scenario.resilience4j()));
		this.guava.put(KEY, scenario.guava());
	}

	@Benchmark
	public Decision ours() {
		return this.ours.acquire(this.oursKey);
	}

	@Benchmark
	public boolean oursTryAcquire() {
		return this.ours.tryAcquire(this.oursKey, 1);
	}

	@Benchmark
	public boolean bucket4j() {
		return this.bucket4j.get(KEY).tryConsume(1);
	}

	@Benchmark
	public boolean bucket4jSynchronized() {
		return this.bucket4jSynchronized.get(KEY).tryConsume(1);
	}

	@Benchmark
	public boolean bucket4jDirect() {
		return this.bucket4jDirect.tryConsume(1);
	}

	@Benchmark
	public boolean resilience4j() {
		return this.resilience4j.get(KEY).acquirePermission();
	}

	@Benchmark
	public boolean guava() {
		return this.guava.get(KEY).tryAcquire();
	}

}
