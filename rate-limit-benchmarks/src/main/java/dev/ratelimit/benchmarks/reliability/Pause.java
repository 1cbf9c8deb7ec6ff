package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;

/**
 * Waits of the campaign's scenarios: between phases of load, while polling.
 */
final class Pause {

	private Pause() {
	}

	static void millis(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	static void of(Duration duration) {
		millis(duration.toMillis());
	}

	/** Waits until a point in {@link System#nanoTime()}, if it is still ahead. */
	static void until(long nanoTime) {
		long left = nanoTime - System.nanoTime();
		if (left > 0) {
			millis(Math.max(1, left / 1_000_000));
		}
	}

}
