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
 */
public record LimitStatus(KeyedLimit target, boolean allowed, long remaining, long retryAfterMicros,
		long resetAfterMicros, long delayMicros, boolean exceedsCapacity) {

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
