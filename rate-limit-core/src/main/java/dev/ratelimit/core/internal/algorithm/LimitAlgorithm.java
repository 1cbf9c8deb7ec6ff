package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

/**
 * The math of one algorithm over its state. {@link #evaluate} never changes the state;
 * {@link #apply} changes it for a call that every limit allowed. Times are microseconds
 * since the epoch; the caller reads the clock. Implementations are stateless singletons;
 * states are not thread-safe and are guarded by the backend.
 *
 * @param <S> the type of the state of one key
 */
public interface LimitAlgorithm<S> {

	/**
	 * Returns the state of a key seen for the first time.
	 * @param limit the limit
	 * @param now the current time
	 * @return a fresh state
	 */
	S fresh(Limit limit, long now);

	/**
	 * Decides a call without changing the state.
	 * @param limit the limit
	 * @param state the key's state
	 * @param now the current time
	 * @param cost the permits the call takes, at least 0
	 * @return the outcome
	 */
	Outcome evaluate(Limit limit, S state, long now, long cost);

	/**
	 * Takes {@code cost} permits; called only after {@link #evaluate} allowed the call at
	 * the same {@code now}.
	 * @param limit the limit
	 * @param state the key's state, changed in place
	 * @param now the current time
	 * @param cost the permits the call takes
	 * @return the id of the lease taken, for a concurrency limit; otherwise {@code null}
	 */
	@Nullable String apply(Limit limit, S state, long now, long cost);

	/**
	 * Gives back {@code cost} permits that {@link #apply} took for a call, as far as they
	 * still count: a bucket regains them up to its capacity, a window that still counts
	 * them lowers its count, a log entry that still holds them gives them up. Permits of
	 * a window that has ended stay spent. Called on a state written under {@code limit}
	 * only. The same math as each algorithm's {@code refund} in the Redis script.
	 * @param limit the limit
	 * @param state the key's state, changed in place
	 * @param now the current time
	 * @param cost the permits to give back
	 * @param mark the {@linkplain Outcome#mark() mark} of the call's allowed outcome
	 */
	void refund(Limit limit, S state, long now, long cost, long mark);

	/**
	 * Returns the state a key holds under {@code to}, given its state written under
	 * {@code from}, a limit of the same algorithm with other parameters, at {@code now}:
	 * spent stays spent (docs/ALGORITHMS.md, "Changed limits"). A bucket keeps what was
	 * spent under the old parameters up to {@code now}, a window its count, a log its
	 * entries, a concurrency limit its leases. Never changes {@code state}; returns it as
	 * it is when the parameters its state depends on are equal.
	 * @param from the limit the state was written under
	 * @param to the limit that decides from now on, of the same algorithm
	 * @param state the key's state under {@code from}
	 * @param now the current time
	 * @return the state under {@code to}, possibly {@code state} itself
	 */
	default S convert(Limit from, Limit to, S state, long now) {
		return state;
	}

	/**
	 * Returns whether a state counts nothing spent at {@code now} beyond what a fresh one
	 * counts: the only state that takes over a counterpart's spent share
	 * ({@link #takeOver}). Always false for an algorithm that takes over no share (a
	 * concurrency limit: requests in flight are not carried).
	 * @param limit the limit
	 * @param state the key's state under {@code limit}
	 * @param now the current time
	 * @return whether the state holds nothing spent of its own
	 */
	default boolean isUnspent(Limit limit, S state, long now) {
		return false;
	}

	/**
	 * Returns the share of its capacity that a state has spent at {@code now}, for a
	 * limit of another algorithm to take over (docs/RUNTIME.md, "What carries over"). The
	 * same math as each algorithm's {@code spentShare} in the Redis script.
	 * @param limit the limit
	 * @param state the key's state under {@code limit}
	 * @param now the current time
	 * @return the share, or {@code null} for an algorithm whose state carries none (a
	 * concurrency limit)
	 */
	default @Nullable SpentShare spentShare(Limit limit, S state, long now) {
		return null;
	}

	/**
	 * Makes a state for which {@link #isUnspent} holds count at least {@code permits}
	 * spent at {@code now}, as if the calls that spent them had been made under this
	 * limit: a bucket holds at most its capacity less them, a window counts them, a log
	 * holds them in an entry at {@code now}. Changes the state in place. The same math as
	 * each algorithm's {@code takeOver} in the Redis script.
	 * @param limit the limit
	 * @param state the key's state under {@code limit}, changed in place
	 * @param now the current time
	 * @param permits the permits to count as spent, from 1 to the limit's capacity
	 */
	default void takeOver(Limit limit, S state, long now, long permits) {
		throw new UnsupportedOperationException(limit.algorithm() + " takes over no spent share");
	}

	/**
	 * Gives back the permits of a lease; does nothing for algorithms without leases or
	 * for an unknown lease.
	 * @param limit the limit
	 * @param state the key's state, changed in place
	 * @param leaseId the lease
	 * @param now the current time
	 */
	default void release(Limit limit, S state, String leaseId, long now) {
	}

	/**
	 * Makes a lease held by a call still in flight expire a lease time from {@code now};
	 * does nothing for algorithms without leases or for a lease that is no longer held.
	 * @param limit the limit
	 * @param state the key's state, changed in place
	 * @param leaseId the lease
	 * @param now the current time
	 */
	default void renew(Limit limit, S state, String leaseId, long now) {
	}

	/**
	 * Returns the math for the given limit's algorithm.
	 * @param limit the limit
	 * @return the algorithm's math
	 */
	static LimitAlgorithm<?> of(Limit limit) {
		return switch (limit.algorithm()) {
			case TOKEN_BUCKET -> TokenBucket.INSTANCE;
			case LEAKY_BUCKET -> LeakyBucket.INSTANCE;
			case FIXED_WINDOW -> FixedWindow.INSTANCE;
			case SLIDING_WINDOW_LOG -> SlidingWindowLog.INSTANCE;
			case SLIDING_WINDOW_COUNTER -> SlidingWindowCounter.INSTANCE;
			case CONCURRENCY -> ConcurrencyLimit.INSTANCE;
		};
	}

	/**
	 * Returns {@code a / b} rounded up, for {@code a >= 0} and {@code b > 0}.
	 * @param a the dividend
	 * @param b the divisor
	 * @return the quotient rounded up
	 */
	static long ceilDiv(long a, long b) {
		return -Math.floorDiv(-a, b);
	}

	/**
	 * Returns {@code a * b / c} rounded up, exactly, for {@code 0 <= a <= c} and
	 * {@code b}, {@code c} from 1 to 2<sup>53</sup> - 1. A product of 2<sup>53</sup> or
	 * more is never formed: the quotient is then built one bit of {@code b} at a time, as
	 * in long division, each step below 2<sup>53</sup>, so that the Redis script's
	 * doubles ({@code mulDivCeil} in its prelude) compute the same number.
	 * @param a the permits spent, at most {@code c}
	 * @param b the capacity of the limit that takes the share over
	 * @param c the capacity they were spent of
	 * @return the quotient rounded up, from 0 to {@code b}
	 */
	static long mulDivCeil(long a, long b, long c) {
		// the integers below 2^53 are exact in the script's doubles
		long exact = 1L << 53;
		if (Math.multiplyHigh(a, b) == 0 && a * b >= 0 && a * b < exact) {
			return ceilDiv(a * b, c);
		}
		// q * c + r = a * x, 0 <= r < c, for x the bits of b read so far, highest first
		long q = 0;
		long r = 0;
		long rest = b;
		for (long bit = exact / 2; bit >= 1; bit /= 2) {
			q = 2 * q;
			if (r >= c - r) {
				r = r - (c - r);
				q = q + 1;
			}
			else {
				r = r + r;
			}
			if (rest >= bit) {
				rest = rest - bit;
				if (r >= c - a) {
					r = r - (c - a);
					q = q + 1;
				}
				else {
					r = r + a;
				}
			}
		}
		return (r > 0) ? q + 1 : q;
	}

}
