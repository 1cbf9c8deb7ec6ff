package dev.ratelimit.benchmarks;

import org.openjdk.jmh.annotations.Threads;

/**
 * 64 requests in flight: 64 JMH threads, each making one synchronous decision at a time.
 */
@Threads(64)
public class RedisInFlight64 extends RedisBenchmark {

}
