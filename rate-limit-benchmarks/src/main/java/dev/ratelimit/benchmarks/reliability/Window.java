package dev.ratelimit.benchmarks.reliability;

import java.util.List;

/**
 * An interval of {@link System#nanoTime()}, such as an outage from the kill of Redis to
 * its first script call after the restart.
 *
 * @param fromNanos its start
 * @param toNanos its end
 */
record Window(long fromNanos, long toNanos) {

	boolean contains(long nanoTime) {
		return nanoTime >= this.fromNanos && nanoTime < this.toNanos;
	}

	static boolean anyContains(List<Window> windows, long nanoTime) {
		return windows.stream().anyMatch((window) -> window.contains(nanoTime));
	}

}
