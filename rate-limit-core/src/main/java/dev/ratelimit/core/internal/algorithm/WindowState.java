package dev.ratelimit.core.internal.algorithm;

/**
 * The state of a fixed window or a sliding window counter: the start of the current
 * window, its count, and (for the sliding counter) the previous window's count.
 */
public final class WindowState {

	long start;

	long current;

	long previous;

	WindowState(long start, long current, long previous) {
		this.start = start;
		this.current = current;
		this.previous = previous;
	}

	/**
	 * Returns a state.
	 * @param start the start of the current window, in microseconds since the epoch
	 * @param current the permits taken in the current window
	 * @param previous the permits taken in the window before it
	 * @return the state
	 */
	public static WindowState of(long start, long current, long previous) {
		return new WindowState(start, current, previous);
	}

	/**
	 * Returns the start of the current window.
	 * @return the start in microseconds since the epoch
	 */
	public long start() {
		return this.start;
	}

	/**
	 * Returns the permits taken in the current window.
	 * @return the count
	 */
	public long current() {
		return this.current;
	}

	/**
	 * Returns the permits taken in the previous window.
	 * @return the count
	 */
	public long previous() {
		return this.previous;
	}

}
