package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;

/**
 * What one limit says about one call, all times in microseconds from the instant of the
 * decision.
 *
 * @param allowed whether the limit lets the call through
 * @param remaining the permits left after this call (after consuming, if allowed)
 * @param retryAfterMicros when rejected: the wait until the same call would be allowed,
 * with no other calls in between; 0 when allowed
 * @param resetAfterMicros the wait until the limit is back to its full capacity, with no
 * other calls in between
 * @param delayMicros for a shaping leaky bucket: how long the call must wait for its
 * turn; otherwise 0
 * @param exceedsCapacity whether the cost is larger than the limit can ever grant, so
 * that waiting never helps
 * @param mark for an allowed call, where its permits go, which a refund of them needs
 * ({@link LimitAlgorithm#refund}): the start of the window that counts them, the time of
 * the log entry that holds them; 0 for a bucket. The Redis script returns the same mark
 */
public record Outcome(boolean allowed, long remaining, long retryAfterMicros, long resetAfterMicros, long delayMicros,
		boolean exceedsCapacity, long mark) {

	/**
	 * Returns an allowed outcome without delay.
	 * @param remaining permits left
	 * @param resetAfterMicros wait until full
	 * @return the outcome
	 */
	static Outcome allowed(long remaining, long resetAfterMicros) {
		return new Outcome(true, remaining, 0, resetAfterMicros, 0, false, 0);
	}

	/**
	 * Returns an allowed outcome without delay whose permits go where {@code mark} says.
	 * @param remaining permits left
	 * @param resetAfterMicros wait until full
	 * @param mark the window start or log time that counts the permits
	 * @return the outcome
	 */
	static Outcome allowed(long remaining, long resetAfterMicros, long mark) {
		return new Outcome(true, remaining, 0, resetAfterMicros, 0, false, mark);
	}

	/**
	 * Returns a rejected outcome that a later retry may turn into an allowed one.
	 * @param remaining permits left
	 * @param retryAfterMicros wait until the call would pass
	 * @param resetAfterMicros wait until full
	 * @return the outcome
	 */
	static Outcome rejected(long remaining, long retryAfterMicros, long resetAfterMicros) {
		return new Outcome(false, remaining, retryAfterMicros, resetAfterMicros, 0, false, 0);
	}

	/**
	 * Returns a rejected outcome for a cost that exceeds the limit's capacity.
	 * @param remaining permits left
	 * @param resetAfterMicros wait until full
	 * @return the outcome
	 */
	static Outcome neverAllowed(long remaining, long resetAfterMicros) {
		return new Outcome(false, remaining, 0, resetAfterMicros, 0, true, 0);
	}

	/**
	 * Returns this outcome as the status of the keyed limit it was computed for.
	 * @param target the keyed limit
	 * @return the status
	 */
	public LimitStatus statusOf(KeyedLimit target) {
		return new LimitStatus(target, this.allowed, this.remaining, this.retryAfterMicros, this.resetAfterMicros,
				this.delayMicros, this.exceedsCapacity);
	}

}
