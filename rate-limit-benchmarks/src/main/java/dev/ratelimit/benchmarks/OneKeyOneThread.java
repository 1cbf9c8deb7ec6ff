package dev.ratelimit.benchmarks;

import org.openjdk.jmh.annotations.Threads;

/**
 * {@link OneKey} with one thread: the cost of a decision without contention.
 */
@Threads(1)
public class OneKeyOneThread extends OneKey {

}
