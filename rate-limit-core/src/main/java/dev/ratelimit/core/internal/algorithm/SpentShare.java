package dev.ratelimit.core.internal.algorithm;

/**
 * The share of its capacity that a limit's state has spent at an instant, which a limit
 * of another algorithm takes over where it holds nothing spent of its own
 * ({@link LimitAlgorithm#takeOver}). The same three values as each algorithm's
 * {@code spentShare} in the Redis script.
 *
 * @param spent the permits spent, rounded up (a bucket's part of a permit counts as one,
 * as a sliding window counter's weighted count does), from 0 to {@code capacity}
 * @param capacity the limit's capacity, positive
 * @param until the time (µs) from which the state counts nothing spent, if no call spends
 * more meanwhile
 */
public record SpentShare(long spent, long capacity, long until) {

	/**
	 * Returns the permits that are the same share of a limit of another capacity, rounded
	 * up, so that taking a share over never hands out quota.
	 * @param capacity the capacity of the limit that takes the share over
	 * @return the permits, from 0 to {@code capacity}
	 */
	public long permitsOf(long capacity) {
		return LimitAlgorithm.mulDivCeil(this.spent, capacity, this.capacity);
	}

}
