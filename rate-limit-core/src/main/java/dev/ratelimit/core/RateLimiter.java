package dev.ratelimit.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Decides whether calls may proceed. Implementations are thread-safe.
 *
 * <p>
 * A call names one or more {@link KeyedLimit keyed limits} and a cost. They are decided
 * together: the call is allowed only if every limit allows it, and a rejected call
 * consumes nothing from any limit.
 *
 * <p>
 * A limit may carry a {@linkplain Limit#penaltyMicros() penalty}: once such a limit
 * rejects a call, every call with a limit of its policy and client key that carries a
 * penalty is rejected for that long, consuming nothing, with a
 * {@linkplain LimitStatus#penalized() penalized} status whose waits are the time left.
 */
public interface RateLimiter {

	/**
	 * Decides a call and, if it is allowed, takes {@code cost} permits from every limit.
	 * @param limits the limits that apply to the call
	 * @param cost the permits the call takes, at least 0
	 * @return the decision
	 * @throws IllegalArgumentException if the cost is negative
	 */
	Decision acquire(List<KeyedLimit> limits, long cost);

	/**
	 * Decides a call of cost 1 against one limit.
	 * @param limit the keyed limit
	 * @return the decision
	 */
	default Decision acquire(KeyedLimit limit) {
		return acquire(List.of(limit), 1);
	}

	/**
	 * Decides a call against one limit.
	 * @param limit the keyed limit
	 * @param cost the permits the call takes
	 * @return the decision
	 */
	default Decision acquire(KeyedLimit limit, long cost) {
		return acquire(List.of(limit), cost);
	}

	/**
	 * Decides a call as {@link #acquire(List, long)} does, without blocking the calling
	 * thread on I/O, so that a reactive application can decide on an event loop. A
	 * limiter that keeps its state in another process answers when the store has answered
	 * (or its failure policy has decided); the default decides on the calling thread,
	 * which suits a limiter that only computes. A call that {@code acquire} would refuse
	 * with an exception (a negative cost, two limits of one name) completes exceptionally
	 * with it.
	 * @param limits the limits that apply to the call
	 * @param cost the permits the call takes, at least 0
	 * @return the decision, once made
	 */
	default CompletableFuture<Decision> acquireAsync(List<KeyedLimit> limits, long cost) {
		try {
			return CompletableFuture.completedFuture(acquire(limits, cost));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back the concurrency permits of an allowed decision as
	 * {@link #release(Decision)} does, without blocking the calling thread on I/O. The
	 * default releases on the calling thread.
	 * @param decision the decision
	 * @return done once the permits are back, as far as this limiter waits for that
	 */
	default CompletableFuture<Void> releaseAsync(Decision decision) {
		try {
			release(decision);
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back {@code cost} permits that an allowed decision of this limiter took from
	 * some of its limits, as far as they still count: a bucket regains them up to its
	 * capacity; a fixed window, a sliding window counter or a log lowers the count that
	 * holds them while that count still weighs. Permits of a window that has ended stay
	 * spent, as do those taken under parameters changed since. Concurrency permits are
	 * given back by {@link #release(Decision)}, not here. Nothing happens for a rejected
	 * decision, one its failure policy made without limits (allowed or refused while the
	 * backend was down), or a limit the decision does not hold. Each call gives back once
	 * more: a caller refunds a decision's limit at most once. The starter refunds a
	 * {@code count-if} reservation whose condition turned out false.
	 * @param decision the allowed decision, made by this limiter
	 * @param limits the limits of the decision to give the permits back to
	 * @param cost the permits the call took from each, as given to {@code acquire}
	 * @throws UnsupportedOperationException if this limiter cannot give permits back (the
	 * default)
	 */
	default void refund(Decision decision, List<KeyedLimit> limits, long cost) {
		throw new UnsupportedOperationException(getClass().getName() + " does not implement refund()");
	}

	/**
	 * Gives back permits as {@link #refund} does, without blocking the calling thread on
	 * I/O. The default refunds on the calling thread.
	 * @param decision the allowed decision, made by this limiter
	 * @param limits the limits of the decision to give the permits back to
	 * @param cost the permits the call took from each
	 * @return done once given back, as far as this limiter waits for that
	 */
	default CompletableFuture<Void> refundAsync(Decision decision, List<KeyedLimit> limits, long cost) {
		try {
			refund(decision, limits, cost);
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Returns each limit's current state without consuming anything: an allowed status of
	 * cost 0 with the permits remaining and the wait until full.
	 * @param limits the keyed limits
	 * @return one status per limit, in order
	 */
	List<LimitStatus> inspect(List<KeyedLimit> limits);

	/**
	 * Gives back the concurrency permits of an allowed decision. Calling it twice, or for
	 * a decision without leases, does nothing.
	 * @param decision the decision
	 */
	void release(Decision decision);

	/**
	 * Keeps the concurrency permits of an allowed decision whose call is still in flight:
	 * each lease then expires a lease time from now, so that a call that lasts longer
	 * than its lease time (a stream, a long poll, a slow upload) keeps holding its
	 * permit. Call it more often than the lease time while the call runs (the starter
	 * renews each held decision every third of its shortest lease time); the lease time
	 * then only bounds what a crashed caller leaves behind. A lease already released, or
	 * dropped once expired, stays gone. Does nothing for a decision without leases;
	 * limiters without leases need not implement it.
	 * @param decision the decision, allowed and not yet released
	 */
	default void renew(Decision decision) {
	}

	/**
	 * Forgets the state of a keyed limit, so that its next call sees fresh state, and
	 * lifts the penalty of its policy and client key ({@link Limit#penaltyMicros()}), if
	 * one is running.
	 * @param limit the keyed limit
	 */
	void reset(KeyedLimit limit);

	/**
	 * Forgets the state of every keyed limit, so that every next call sees fresh state:
	 * one call that clears all limits between tests. Not meant for production, where
	 * {@link #reset(KeyedLimit)} resets one client; calls made while it runs may keep
	 * their permits. The default throws: a limiter that holds state implements it.
	 * @throws UnsupportedOperationException if this limiter cannot forget all its state
	 * at once
	 */
	default void resetAll() {
		throw new UnsupportedOperationException(getClass().getName() + " does not implement resetAll()");
	}

}
