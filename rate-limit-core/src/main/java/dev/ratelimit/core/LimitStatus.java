package dev.ratelimit.core;

import java.time.Duration;

/**
 * One limit's part in a {@link Decision}.
 *
 * @param target the keyed limit
 * @param allowed whether this limit allowed the call
 * @param remaining permits left after the call
 * @param retryAfterMicros when rejected, the wait until this limit would allow the call;
 * 0 when allowed
 * @param resetAfterMicros the wait until this limit is back to full capacity
 * @param delayMicros the shaping delay this limit imposes
 * @param exceedsCapacity whether the call costs more than this limit can ever grant
 * @param penalized whether the limit's policy and client key serve a penalty
 * ({@link Limit#penaltyMicros()}): the call is rejected whatever the limit says,
 * {@code remaining} is 0, and {@code retryAfterMicros} and {@code resetAfterMicros} are
 * the time left of the penalty
 */
public record LimitStatus(KeyedLimit target, boolean allowed, long remaining, long retryAfterMicros,
		long resetAfterMicros, long delayMicros, boolean exceedsCapacity, boolean penalized) {

	/**
	 * Creates the status of a limit that serves no penalty.
	 * @param target the keyed limit
	 * @param allowed whether this limit allowed the call
	 * @param remaining permits left after the call
	 * @param retryAfterMicros when rejected, the wait until this limit would allow the
	 * call; 0 when allowed
	 * @param resetAfterMicros the wait until this limit is back to full capacity
	 * @param delayMicros the shaping delay this limit imposes
	 * @param exceedsCapacity whether the call costs more than this limit can ever grant
	 */
	public LimitStatus(KeyedLimit target, boolean allowed, long remaining, long retryAfterMicros, long resetAfterMicros,
			long delayMicros, boolean exceedsCapacity) {
		this(target, allowed, remaining, retryAfterMicros, resetAfterMicros, delayMicros, exceedsCapacity, false);
	}

	/**
	 * Returns the status of a limit whose policy and client key serve a penalty:
	 * rejected, nothing remaining, and the time left of the penalty as both waits.
	 * @param target the keyed limit
	 * @param leftMicros the time left of the penalty
	 * @return the status
	 */
	public static LimitStatus ofPenalty(KeyedLimit target, long leftMicros) {
		return new LimitStatus(target, false, 0, leftMicros, leftMicros, 0, false, true);
	}

	/**
	 * Returns the limit's capacity, the most permits it grants at once.
	 * @return the capacity
	 */
	public long limit() {
		return this.target.limit().capacity();
	}

	/**
	 * Returns the wait until this limit would allow the call.
	 * @return the wait, zero when allowed
	 */
	public Duration retryAfter() {
		return Duration.ofNanos(this.retryAfterMicros * 1000);
	}

	/**
	 * Returns the wait until this limit is back to full capacity.
	 * @return the wait
	 */
	public Duration resetAfter() {
		return Duration.ofNanos(this.resetAfterMicros * 1000);
	}

}
