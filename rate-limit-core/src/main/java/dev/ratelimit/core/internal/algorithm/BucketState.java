package dev.ratelimit.core.internal.algorithm;

/**
 * The state of a token or leaky bucket: a level in units (tokens for a token bucket,
 * water for a leaky bucket; a permit is {@code Limit#unitsPerPermit()} units) at an
 * instant.
 */
public final class BucketState {

	long level;

	long updatedAt;

	BucketState(long level, long updatedAt) {
		this.level = level;
		this.updatedAt = updatedAt;
	}

	/**
	 * Returns a state with the given level at the given time.
	 * @param level the level in units
	 * @param updatedAt the time in microseconds
	 * @return the state
	 */
	public static BucketState of(long level, long updatedAt) {
		return new BucketState(level, updatedAt);
	}

	/**
	 * Returns the level in units at {@link #updatedAt()}.
	 * @return the level
	 */
	public long level() {
		return this.level;
	}

	/**
	 * Returns the time of the level.
	 * @return the time in microseconds
	 */
	public long updatedAt() {
		return this.updatedAt;
	}

}
