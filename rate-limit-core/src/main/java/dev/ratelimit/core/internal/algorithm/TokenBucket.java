package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

import static dev.ratelimit.core.internal.algorithm.LimitAlgorithm.ceilDiv;

/**
 * A token bucket with continuous refill, exact in integers. A permit is
 * {@code p = period / g} units and the bucket gains {@code n = permits / g} units per
 * microsecond, where {@code g} is the greatest common divisor of the rate's permits and
 * period in microseconds; so tokens accrue continuously, never in steps, and never drift.
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
	 * Returns the tokens, in units, that a bucket holds at {@code at} (not before its
	 * last update).
	 * @param limit the limit
	 * @param state the state
	 * @param at the time, not earlier than {@code state.updatedAt()}
	 * @return the level in units, at most the capacity
	 */
	static long refill(Limit limit, BucketState state, long at) {
		return levelAt(limit, state.level, state.updatedAt, at);
	}

	/**
	 * Returns the tokens, in units, that a bucket which held {@code level} units at
	 * {@code updatedAt} holds at {@code at}: the refill of {@link #evaluate}, for a
	 * caller that keeps the state in its own fields and only needs to know whether a cost
	 * fits (a cost of {@code c} permits fits if {@code c <= capacity} and
	 * {@code c * unitsPerPermit <= levelAt(...)}; taking it leaves
	 * {@code levelAt(...) - c * unitsPerPermit} units at {@code at}, as {@link #apply}
	 * does).
	 * @param limit the limit
	 * @param level the level in units at {@code updatedAt}
	 * @param updatedAt the time of that level
	 * @param at the time, not earlier than {@code updatedAt}
	 * @return the level in units, at most the capacity
	 */
	public static long levelAt(Limit limit, long level, long updatedAt, long at) {
		long full = limit.capacity() * limit.unitsPerPermit();
		long deficit = full - level;
		if (deficit <= 0) {
			return full;
		}
		long elapsed = at - updatedAt;
		if (elapsed <= 0) {
			return level;
		}
		if (reaches(elapsed, limit.unitsPerMicro(), deficit)) {
			return full;
		}
		return level + elapsed * limit.unitsPerMicro();
	}

	/**
	 * Returns whether {@code elapsed} microseconds at {@code perMicro} units each add up
	 * to at least {@code units}: {@code elapsed >= ceilDiv(units, perMicro)}, exactly,
	 * without a division (this runs on every decision) and without overflow (the product
	 * is taken in 128 bits).
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

	/**
	 * Whether two bucket limits count a state alike: same capacity, and same units.
	 */
	static boolean sameBucket(Limit from, Limit to) {
		return from.capacity() == to.capacity() && from.unitsPerPermit() == to.unitsPerPermit()
				&& from.unitsPerMicro() == to.unitsPerMicro();
	}

	/**
	 * Returns {@code units} of {@code from} (tokens spent, or water) in units of
	 * {@code to}, at most {@code to}'s capacity: exact when a permit is as many units
	 * under both, else rounded up to whole permits, so that no conversion hands out a
	 * fraction of a permit (and no product leaves 2<sup>53</sup>).
	 * @param from the limit the units were counted under
	 * @param to the limit they are carried over to
	 * @param units the units, at least 0
	 * @return the units under {@code to}
	 */
	static long carryOver(Limit from, Limit to, long units) {
		long full = to.capacity() * to.unitsPerPermit();
		if (from.unitsPerPermit() == to.unitsPerPermit()) {
			return Math.min(units, full);
		}
		long permits = ceilDiv(units, from.unitsPerPermit());
		return (permits >= to.capacity()) ? full : permits * to.unitsPerPermit();
	}

	/**
	 * Refills under the old parameters up to {@code now}; what was spent then stays
	 * spent: the level becomes max(0, new capacity - spent).
	 */
	@Override
	public BucketState convert(Limit from, Limit to, BucketState state, long now) {
		if (sameBucket(from, to)) {
			return state;
		}
		long at = Math.max(now, state.updatedAt);
		long spent = from.capacity() * from.unitsPerPermit() - refill(from, state, at);
		return new BucketState(to.capacity() * to.unitsPerPermit() - carryOver(from, to, spent), at);
	}

	/**
	 * Refilled up to {@code now}, the bucket holds at least what a fresh one does.
	 */
	@Override
	public boolean isUnspent(Limit limit, BucketState state, long now) {
		return refill(limit, state, Math.max(now, state.updatedAt)) >= limit.initial() * limit.unitsPerPermit();
	}

	/**
	 * The tokens missing, refilled up to {@code now}, rounded up to whole permits; spent
	 * until the bucket is full again.
	 */
	@Override
	public SpentShare spentShare(Limit limit, BucketState state, long now) {
		long at = Math.max(now, state.updatedAt);
		long missing = limit.capacity() * limit.unitsPerPermit() - refill(limit, state, at);
		return new SpentShare(ceilDiv(missing, limit.unitsPerPermit()), limit.capacity(),
				at + ceilDiv(missing, limit.unitsPerMicro()));
	}

	/**
	 * The level, refilled up to {@code now}, becomes at most the capacity less the
	 * permits.
	 */
	@Override
	public void takeOver(Limit limit, BucketState state, long now, long permits) {
		long at = Math.max(now, state.updatedAt);
		state.level = Math.min(refill(limit, state, at), (limit.capacity() - permits) * limit.unitsPerPermit());
		state.updatedAt = at;
	}

	@Override
	public @Nullable String apply(Limit limit, BucketState state, long now, long cost) {
		long at = Math.max(now, state.updatedAt);
		state.level = refill(limit, state, at) - cost * limit.unitsPerPermit();
		state.updatedAt = at;
		return null;
	}

	/**
	 * Puts the tokens back, at most up to the capacity: a bucket that has refilled since
	 * the call gains less, or nothing.
	 */
	@Override
	public void refund(Limit limit, BucketState state, long now, long cost, long mark) {
		long at = Math.max(now, state.updatedAt);
		long full = limit.capacity() * limit.unitsPerPermit();
		state.level = Math.min(full, refill(limit, state, at) + cost * limit.unitsPerPermit());
		state.updatedAt = at;
	}

}
