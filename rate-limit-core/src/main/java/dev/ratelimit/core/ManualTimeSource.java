package dev.ratelimit.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock for tests that moves only when the test moves it: give it to a limiter (or, in
 * a Spring Boot application, declare it as the {@link TimeSource} bean) and
 * {@link #advance advance} it instead of sleeping. Thread-safe: calls on other threads
 * see each move at once.
 *
 * <p>
 * It drives the limiters that read their time source: the in-memory backend, and the
 * Redis backend's own in-memory limits. Redis decides with its own clock.
 */
public final class ManualTimeSource implements TimeSource {

	/**
	 * Where {@link #ManualTimeSource()} starts: 2026-01-01T00:00Z, a whole number of days
	 * (so of every common window) since the epoch.
	 */
	public static final Instant DEFAULT_START = Instant.parse("2026-01-01T00:00:00Z");

	private final AtomicLong now;

	/**
	 * Creates a clock at {@link #DEFAULT_START}.
	 */
	public ManualTimeSource() {
		this(DEFAULT_START);
	}

	/**
	 * Creates a clock at the given time.
	 * @param start the time the clock shows until it is moved
	 */
	public ManualTimeSource(Instant start) {
		this(toMicros(start));
	}

	/**
	 * Creates a clock at the given time.
	 * @param startMicros microseconds since the epoch
	 */
	public ManualTimeSource(long startMicros) {
		this.now = new AtomicLong(startMicros);
	}

	@Override
	public long nowMicros() {
		return this.now.get();
	}

	/**
	 * Returns the time the clock shows.
	 * @return the current time, to the microsecond
	 */
	@Override
	public Instant now() {
		return TimeSource.instant(this.now.get());
	}

	/**
	 * Moves the clock forward. A fraction of a microsecond is dropped.
	 * @param duration how far, zero or positive
	 * @return this clock
	 * @throws IllegalArgumentException if the duration is negative (use {@link #set} to
	 * move the clock back)
	 */
	public ManualTimeSource advance(Duration duration) {
		Objects.requireNonNull(duration, "duration must not be null");
		if (duration.isNegative()) {
			throw new IllegalArgumentException("duration must not be negative (was " + duration + ")");
		}
		return advanceMicros(TimeUnit.MICROSECONDS.convert(duration));
	}

	/**
	 * Moves the clock forward.
	 * @param micros how far, in microseconds, zero or positive
	 * @return this clock
	 * @throws IllegalArgumentException if {@code micros} is negative
	 */
	public ManualTimeSource advanceMicros(long micros) {
		if (micros < 0) {
			throw new IllegalArgumentException("micros must not be negative (was " + micros + ")");
		}
		this.now.accumulateAndGet(micros, (current, delta) -> {
			long moved = current + delta;
			// saturate rather than wrap to a time before the epoch
			return (moved < current) ? Long.MAX_VALUE : moved;
		});
		return this;
	}

	/**
	 * Sets the clock, forward or back (back only to test a clock that jumps: the state a
	 * limiter holds was made at the later time).
	 * @param time the time the clock shows from now on
	 */
	public void set(Instant time) {
		set(toMicros(time));
	}

	/**
	 * Sets the clock, forward or back.
	 * @param micros microseconds since the epoch
	 */
	public void set(long micros) {
		this.now.set(micros);
	}

	@Override
	public String toString() {
		return "ManualTimeSource[" + now() + "]";
	}

	private static long toMicros(Instant time) {
		Objects.requireNonNull(time, "time must not be null");
		return Math.addExact(Math.multiplyExact(time.getEpochSecond(), 1_000_000L), time.getNano() / 1000);
	}

}
