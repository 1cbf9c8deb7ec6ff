package dev.ratelimit.core.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

import static dev.ratelimit.core.algorithm.LimitAlgorithm.ceilDiv;

/**
 * A token bucket with continuous refill, exact in integers. A permit is {@code p = period / g} units and the bucket
 * gains {@code n = permits / g} units per microsecond, where {@code g} is the greatest common divisor of the rate's
 * permits and period in microseconds; so tokens accrue continuously, never in steps, and never drift.
 */
public final class TokenBucket implements LimitAlgorithm<BucketState> {

	static final TokenBucket INSTANCE = new TokenBucket();

	private TokenBucket() {
	}

	@Override
	public BucketState fresh(Limit limit, long now) {
		return new BucketState(limit.initial() * limit.unitsPerPermit(), now);
	}

	/**
	 * Returns the tokens, in units, that a bucket holds at {@code at} (not before its last update).
	 * @param limit the limit
	 * @param state the state
	 * @param at the time, not earlier than {@code state.updatedAt()}
	 * @return the level in units, at most the capacity
	 */
	static long refill(Limit limit, BucketState state, long at) {
		long full = limit.capacity() * limit.unitsPerPermit();
		long deficit = full - state.level;
		if (deficit <= 0) {
			return full;
		}
		long elapsed = at - state.updatedAt;
		if (elapsed <= 0) {
			return state.level;
		}
		if (reaches(elapsed, limit.unitsPerMicro(), deficit)) {
			return full;
		}
		return state.level + elapsed * limit.unitsPerMicro();
	}

	/**
	 * Returns whether {@code elapsed} microseconds at {@code perMicro} units each add up to at least {@code units}:
	 * {@code elapsed >= ceilDiv(units, perMicro)}, exactly, without a division (this runs on every decision) and
	 * without overflow (the product is taken in 128 bits).
	 * @param elapsed the time, positive
	 * @param perMicro the units per microsecond, positive
	 * @param units the units to reach, positive
	 * @return whether {@code elapsed * perMicro >= units}
	 */
	static boolean reaches(long elapsed, long perMicro, long units) {
		if (elapsed >= units) {
			return true;
		}
		return Math.multiplyHigh(elapsed, perMicro) != 0 || Long.compareUnsigned(elapsed * perMicro, units) >= 0;
	}

	@Override
	public Outcome evaluate(Limit limit, BucketState state, long now, long cost) {
		long at = Math.max(now, state.updatedAt);
		long lag = at - now;
		long perPermit = limit.unitsPerPermit();
		long perMicro = limit.unitsPerMicro();
		long full = limit.capacity() * perPermit;
		long level = refill(limit, state, at);
		if (cost > limit.capacity()) {
			return Outcome.neverAllowed(level / perPermit, lag + ceilDiv(full - level, perMicro));
		}
		long need = cost * perPermit;
		if (need <= level) {
			long after = level - need;
			return Outcome.allowed(after / perPermit, lag + ceilDiv(full - after, perMicro));
		}
		return Outcome.rejected(level / perPermit, lag + ceilDiv(need - level, perMicro),
				lag + ceilDiv(full - level, perMicro));
	}

	@Override
	public @Nullable String apply(Limit limit, BucketState state, long now, long cost) {
		long at = Math.max(now, state.updatedAt);
		state.level = refill(limit, state, at) - cost * limit.unitsPerPermit();
		state.updatedAt = at;
		return null;
	}

}
