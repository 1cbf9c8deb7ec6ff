package dev.ratelimit.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when a test moves it.
 */
public final class ManualTimeSource implements TimeSource {

	private final AtomicLong now;

	/**
	 * Creates a clock at the given time.
	 * @param startMicros microseconds since the epoch
	 */
	public ManualTimeSource(long startMicros) {
		this.now = new AtomicLong(startMicros);
	}

	/**
	 * Creates a clock at 2026-01-01T00:00Z, a whole number of days (so of every common
	 * window) since the epoch.
	 */
	public ManualTimeSource() {
		this(1_767_225_600_000_000L);
	}

	@Override
	public long nowMicros() {
		return this.now.get();
	}

	/**
	 * Moves the clock forward.
	 * @param duration how far
	 * @return this clock
	 */
	public ManualTimeSource advance(Duration duration) {
		this.now.addAndGet(duration.toNanos() / 1000);
		return this;
	}

	/**
	 * Moves the clock forward.
	 * @param micros how far, in microseconds
	 * @return this clock
	 */
	public ManualTimeSource advanceMicros(long micros) {
		this.now.addAndGet(micros);
		return this;
	}

	/**
	 * Sets the clock.
	 * @param micros microseconds since the epoch
	 */
	public void set(long micros) {
		this.now.set(micros);
	}

}
