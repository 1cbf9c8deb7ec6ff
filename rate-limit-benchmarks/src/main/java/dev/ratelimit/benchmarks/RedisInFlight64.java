package dev.ratelimit.benchmarks;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Threads;

/**
 * 64 requests in flight: 64 JMH threads, each making one synchronous decision at a time.
 */
@Threads(64)
public class RedisInFlight64 extends RedisBenchmark {

	/**
	 * Not a limiter: EVALSHA of the script {@code return 1}, the least a script call asks
	 * of Redis, on a Lettuce connection opened and waited for as ours opens and waits for
	 * its own ({@link TrivialScript}). The ceiling of ours in the same run, on the same
	 * threads: what the client and the server cost for a round trip that decides nothing.
	 */
	@Benchmark
	public long trivialScript() throws Exception {
		return this.side.trivialScript();
	}

}
