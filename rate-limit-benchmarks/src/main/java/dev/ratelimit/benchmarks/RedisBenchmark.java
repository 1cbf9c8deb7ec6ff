package dev.ratelimit.benchmarks;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Decisions per second against one Redis server (started by {@code run.sh}), each a
 * synchronous call that returns once Redis has answered. The subclasses fix the number of
 * JMH threads, so the number of requests in flight.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
public abstract class RedisBenchmark {

	// Every side is called by the same threads, each with one blocking call at a time,
	// over one multiplexed Lettuce
	// connection per side (see RedisSides). keys=1: one hot key for every call;
	// keys=100000: a key picked at random per
	// call. Only the side of the running method is built (and connected) in its fork.
	@Param({ "1", "100000" })
	public int keys;

	private String[] names;

	RedisSides.Side side;

	@Setup
	public void setUp(BenchmarkParams params) {
		String benchmark = params.getBenchmark();
		this.side = RedisSides.of(benchmark.substring(benchmark.lastIndexOf('.') + 1));
		this.names = new String[this.keys];
		for (int i = 0; i < this.keys; i++) {
			this.names[i] = "client-" + i;
		}
	}

	@TearDown
	public void tearDown() {
		this.side.close();
	}

	private String key() {
		return (this.keys == 1) ? this.names[0] : this.names[ThreadLocalRandom.current().nextInt(this.keys)];
	}

	/**
	 * Ours, token bucket: {@code RedisRateLimiter.acquire(keyedLimit)}, one FCALL
	 * (EVALSHA before Redis 7).
	 */
	@Benchmark
	public boolean ours() {
		return this.side.decide(key());
	}

	/** Ours, sliding window counter: one FCALL (EVALSHA before Redis 7). */
	@Benchmark
	public boolean oursSlidingWindow() {
		return this.side.decide(key());
	}

	/**
	 * Ours, token bucket in lease mode ({@link RedisSides#LEASE} permits per round trip).
	 */
	@Benchmark
	public boolean oursLease() {
		return this.side.decide(key());
	}

	/** Bucket4j-Lettuce, compare-and-swap proxy manager: {@code proxy.tryConsume(1)}. */
	@Benchmark
	public boolean bucket4jLettuce() {
		return this.side.decide(key());
	}

	/**
	 * Spring Cloud Gateway's {@code RedisRateLimiter} as a library:
	 * {@code isAllowed(route, key).block()}.
	 */
	@Benchmark
	public boolean springCloudGateway() {
		return this.side.decide(key());
	}

}
