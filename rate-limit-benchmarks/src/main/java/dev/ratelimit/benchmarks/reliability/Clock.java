package dev.ratelimit.benchmarks.reliability;

/**
 * Converts {@link System#nanoTime()} readings, which the campaign measures intervals
 * with, to epoch milliseconds, which the access log records.
 */
final class Clock {

	private static final long OFFSET_MILLIS = System.currentTimeMillis() - System.nanoTime() / 1_000_000;

	private Clock() {
	}

	static long epochMillis(long nanoTime) {
		return OFFSET_MILLIS + nanoTime / 1_000_000;
	}

	static double millisBetween(long fromNanos, long toNanos) {
		return (toNanos - fromNanos) / 1e6;
	}

}
