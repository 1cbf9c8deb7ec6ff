package dev.ratelimit.core;

/**
 * The clock a limiter reads, in microseconds since the epoch. Injectable so that tests
 * control time exactly, as Caffeine's {@code Ticker} is.
 */
@FunctionalInterface
public interface TimeSource {

	/**
	 * Returns the current time in microseconds since 1970-01-01T00:00Z.
	 * @return the current time
	 */
	long nowMicros();

	/**
	 * Returns a time source that starts at the wall-clock time and then advances with
	 * {@link System#nanoTime()}, so that it never goes backwards when the wall clock is
	 * adjusted.
	 * @return the system time source
	 */
	static TimeSource system() {
		return SystemTimeSource.INSTANCE;
	}

}
