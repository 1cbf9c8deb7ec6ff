package dev.ratelimit.benchmarks;

import org.openjdk.jmh.annotations.Threads;

/**
 * One thread, synchronous: one request in flight, so each decision costs a full round
 * trip.
 */
@Threads(1)
public class RedisOneThread extends RedisBenchmark {

}
