package dev.ratelimit.benchmarks;

import java.time.Duration;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;

/**
 * The time of one sliding-window-log decision on a full log of {@code entries} entries,
 * in memory or on Redis. The time must not grow with the log. Not part of
 * {@code run.sh}'s report; run it alone:
 * {@code java -jar benchmarks.jar SlidingLogCost -p backend=memory,redis}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@Threads(1)
public class SlidingLogCost {

	/*
	 * One key holds entries entries of one permit, one a microsecond, in a window of
	 * entries microseconds. rejected(): the clock stands still, so every call finds the
	 * log full. allowed(): the clock moves on a microsecond per call, so one entry leaves
	 * the window, the call takes its place, and the log stays full. backend=memory (the
	 * default) decides in this JVM; backend=redis on the server found through
	 * BENCH_REDIS_PORT, one round trip per call.
	 */

	/** 2026-01-01T00:00Z in microseconds. */
	private static final long START = 1_767_225_600_000_000L;

	@Param({ "1000", "100000" })
	public int entries;

	@Param({ "memory" })
	public String backend;

	/** The time every call reads; only the benchmark's one thread moves it. */
	private long now;

	private RateLimiter limiter;

	private LettuceConnectionFactory connectionFactory;

	private KeyedLimit key;

	@Setup
	public void setUp() {
		Limit limit = Limit.slidingWindowLog(this.entries + "/" + this.entries + "us");
		this.key = new KeyedLimit("api", "client-" + System.nanoTime(), limit);
		this.now = START;
		this.limiter = switch (this.backend) {
			case "memory" -> InMemoryRateLimiter.builder().timeSource(() -> this.now).build();
			case "redis" -> redis();
			default -> throw new IllegalArgumentException("backend must be memory or redis, not " + this.backend);
		};
		for (int i = 0; i < this.entries; i++) {
			if (!this.limiter.acquire(this.key, 1).isAllowed()) {
				throw new IllegalStateException("filling entry " + i + " of the log was rejected");
			}
			this.now++;
		}
		this.now--;
		if (this.limiter.acquire(this.key, 1).isAllowed()) {
			throw new IllegalStateException("the filled log allowed one more call");
		}
	}

	private RateLimiter redis() {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", RedisSides.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		return RedisRateLimiter.builder(this.connectionFactory)
			.keyPrefix("bench-swl")
			.timeout(Duration.ofSeconds(5))
			.failureMode(FailureMode.DENY)
			.timeSource(() -> this.now)
			.build();
	}

	@TearDown
	public void tearDown() {
		if (this.connectionFactory != null) {
			RedisRateLimiter redis = (RedisRateLimiter) this.limiter;
			redis.reset(this.key);
			redis.close();
			this.connectionFactory.destroy();
		}
	}

	/** A call on the full log: rejected, and nothing changes. */
	@Benchmark
	public boolean rejected() {
		return this.limiter.acquire(this.key, 1).isAllowed();
	}

	/**
	 * A call a microsecond after the previous one: the oldest entry has left, so it is
	 * allowed.
	 */
	@Benchmark
	public boolean allowed() {
		this.now++;
		return this.limiter.acquire(this.key, 1).isAllowed();
	}

}
