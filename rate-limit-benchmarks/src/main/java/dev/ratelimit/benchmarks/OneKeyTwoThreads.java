package dev.ratelimit.benchmarks;

import org.openjdk.jmh.annotations.Threads;

/**
 * {@link OneKey} with two threads on the one key: contention on its state.
 */
@Threads(2)
public class OneKeyTwoThreads extends OneKey {

}
