package dev.ratelimit.core;

import java.time.Instant;

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
	 * Returns the current time as an instant, to the microsecond.
	 * @return the current time
	 */
	default Instant now() {
		return instant(nowMicros());
	}

	/**
	 * Returns the instant of a time in microseconds since the epoch, as this interface
	 * counts time.
	 * @param epochMicros microseconds since 1970-01-01T00:00Z
	 * @return the instant
	 */
	static Instant instant(long epochMicros) {
		return Instant.ofEpochSecond(Math.floorDiv(epochMicros, 1_000_000L),
				Math.floorMod(epochMicros, 1_000_000L) * 1000L);
	}

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
