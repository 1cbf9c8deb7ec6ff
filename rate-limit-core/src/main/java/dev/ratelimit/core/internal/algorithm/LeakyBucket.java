package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

import static dev.ratelimit.core.internal.algorithm.LimitAlgorithm.ceilDiv;

/**
 * A leaky bucket: each call pours its cost into a bucket of depth {@code capacity} that
 * drains continuously at the rate. Policing rejects a call that does not fit; shaping
 * admits it with a delay equal to the time the water ahead of it takes to drain, and
 * rejects it when it does not fit or would wait longer than {@code max-wait}. Units are
 * those of {@link TokenBucket}.
 */
final class LeakyBucket implements LimitAlgorithm<BucketState> {

	static final LeakyBucket INSTANCE = new LeakyBucket();

	private LeakyBucket() {
	}

	@Override
	public BucketState fresh(Limit limit, long now) {
		return new BucketState(0, now);
	}

	static long drain(Limit limit, BucketState state, long at) {
		if (state.level <= 0) {
			return 0;
		}
		long elapsed = at - state.updatedAt;
		if (elapsed <= 0) {
			return state.level;
		}
		if (TokenBucket.reaches(elapsed, limit.unitsPerMicro(), state.level)) {
			return 0;
		}
		return state.level - elapsed * limit.unitsPerMicro();
	}

	@Override
	public Outcome evaluate(Limit limit, BucketState state, long now, long cost) {
		long at = Math.max(now, state.updatedAt);
		long lag = at - now;
		long perPermit = limit.unitsPerPermit();
		long perMicro = limit.unitsPerMicro();
		long full = limit.capacity() * perPermit;
		long water = drain(limit, state, at);
		long reset = lag + ceilDiv(water, perMicro);
		if (cost > limit.capacity()) {
			return Outcome.neverAllowed((full - water) / perPermit, reset);
		}
		long need = cost * perPermit;
		long bound = full - need;
		// A call of cost 0 (an inspection) pours nothing, so it takes no place in the
		// queue: it neither waits nor is
		// refused for the wait, which after an admitted call can exceed max-wait by that
		// call's own cost.
		boolean shape = limit.mode() == LeakMode.SHAPE && cost > 0;
		if (shape && limit.maxWaitMicros() >= 0 && limit.maxWaitMicros() < ceilDiv(bound, perMicro)) {
			bound = limit.maxWaitMicros() * perMicro;
		}
		if (water <= bound) {
			long after = water + need;
			long delay = shape ? lag + ceilDiv(water, perMicro) : 0;
			return new Outcome(true, (full - after) / perPermit, 0, lag + ceilDiv(after, perMicro), delay, false, 0);
		}
		return Outcome.rejected((full - water) / perPermit, lag + ceilDiv(water - bound, perMicro), reset);
	}

	/**
	 * Keeps the water, drained under the old leak up to {@code now}, at most the new
	 * depth.
	 */
	@Override
	public BucketState convert(Limit from, Limit to, BucketState state, long now) {
		if (TokenBucket.sameBucket(from, to)) {
			return state;
		}
		long at = Math.max(now, state.updatedAt);
		return new BucketState(TokenBucket.carryOver(from, to, drain(from, state, at)), at);
	}

	/** Drained up to {@code now}, the bucket is empty. */
	@Override
	public boolean isUnspent(Limit limit, BucketState state, long now) {
		return drain(limit, state, Math.max(now, state.updatedAt)) == 0;
	}

	/**
	 * The water, drained up to {@code now}, rounded up to whole permits, at most the
	 * depth; spent until it has drained.
	 */
	@Override
	public SpentShare spentShare(Limit limit, BucketState state, long now) {
		long at = Math.max(now, state.updatedAt);
		long water = drain(limit, state, at);
		return new SpentShare(Math.min(ceilDiv(water, limit.unitsPerPermit()), limit.capacity()), limit.capacity(),
				at + ceilDiv(water, limit.unitsPerMicro()));
	}

	/** The bucket holds at least the permits' water. */
	@Override
	public void takeOver(Limit limit, BucketState state, long now, long permits) {
		long at = Math.max(now, state.updatedAt);
		state.level = Math.max(drain(limit, state, at), permits * limit.unitsPerPermit());
		state.updatedAt = at;
	}

	@Override
	public @Nullable String apply(Limit limit, BucketState state, long now, long cost) {
		long at = Math.max(now, state.updatedAt);
		state.level = drain(limit, state, at) + cost * limit.unitsPerPermit();
		state.updatedAt = at;
		return null;
	}

	/**
	 * Takes the call's water out again, down to empty: a bucket that has drained since
	 * the call loses less, or nothing.
	 */
	@Override
	public void refund(Limit limit, BucketState state, long now, long cost, long mark) {
		long at = Math.max(now, state.updatedAt);
		state.level = Math.max(0, drain(limit, state, at) - cost * limit.unitsPerPermit());
		state.updatedAt = at;
	}

}
