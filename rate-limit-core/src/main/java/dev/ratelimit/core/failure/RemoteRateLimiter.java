package dev.ratelimit.core.failure;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.RateLimiter;

import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} whose state lives in another process: what the
 * {@link FailurePolicyRateLimiter failure policy} may ask of it beyond deciding calls.
 * Its {@link #acquire} throws {@link BackendUnavailableException} when it cannot decide,
 * and its {@link #acquireAsync} completes exceptionally with one; a store that answers
 * through I/O implements {@link #acquireAsync} and {@link #releaseAsync} without blocking
 * the calling thread.
 */
public interface RemoteRateLimiter extends RateLimiter {

	/**
	 * Decides a call from what this process holds of the remote state (permits taken
	 * ahead), without asking the store; {@code null} when that is not enough.
	 * @param limits the limits of the call
	 * @param cost the permits the call takes
	 * @param takeAhead whether the store answers in time, so that, should this call leave
	 * little of that state here, more may be taken ahead from the store, with no caller
	 * waiting for it
	 * @return the decision, or {@code null} to ask the store
	 * @throws BackendUnavailableException with reason
	 * {@link BackendUnavailableException.Reason#BUSY BUSY} if another call holds that
	 * state too long, so that this one is decided by the failure policy's own limits
	 */
	default @Nullable Decision decideWithoutAsking(List<KeyedLimit> limits, long cost, boolean takeAhead) {
		return null;
	}

	/**
	 * Decides a call as {@link #decideWithoutAsking} does, without blocking the calling
	 * thread: where another call holds that state (a fill of it on its way to the store),
	 * the answer comes once that call is done. The default asks
	 * {@link #decideWithoutAsking} on the calling thread, which suits a limiter that
	 * holds no such state.
	 * @param limits the limits of the call
	 * @param cost the permits the call takes
	 * @param takeAhead as {@link #decideWithoutAsking} takes it
	 * @return the decision, or {@code null} to ask the store; failed with a
	 * {@link BackendUnavailableException} of reason
	 * {@link BackendUnavailableException.Reason#BUSY BUSY} as
	 * {@link #decideWithoutAsking} throws it
	 */
	default CompletableFuture<@Nullable Decision> decideWithoutAskingAsync(List<KeyedLimit> limits, long cost,
			boolean takeAhead) {
		try {
			return CompletableFuture.completedFuture(decideWithoutAsking(limits, cost, takeAhead));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Sends a call decided elsewhere to the store without waiting for the answer, so that
	 * the store still counts it. It may drop the call (too many unanswered, or a limit it
	 * could not give back).
	 * @param limits the limits of the call
	 * @param cost the permits the call took
	 */
	default void send(List<KeyedLimit> limits, long cost) {
	}

	/**
	 * Makes a write to the store that fails as a decision would, within the store's
	 * timeout.
	 * @throws BackendUnavailableException if it does not succeed in time
	 */
	void check();

	/**
	 * Returns the parts of the store that a call's limits live on, for a store whose
	 * parts fail apart (the masters of a Redis Cluster): the failure policy judges each
	 * part up, late or down on its own, so that one part's failure leaves the calls of
	 * the others to the store. The default, an empty list, is a store of one part; so is
	 * a call whose parts are not known (a topology not read yet).
	 * @param limits the limits of a call
	 * @return the distinct parts, or an empty list for the store as a whole
	 */
	default List<String> partsOf(List<KeyedLimit> limits) {
		return List.of();
	}

	/**
	 * Returns every part of the store as it is now (for a Redis Cluster, the masters that
	 * serve slots); empty for a store of one part, or one whose parts are not known.
	 * @return the parts
	 */
	default List<String> parts() {
		return List.of();
	}

	/**
	 * Makes a write to one part of the store, as {@link #check()} does to the store; the
	 * default checks the store as a whole.
	 * @param part one of {@link #parts()}
	 * @throws BackendUnavailableException if it does not succeed in time
	 */
	default void check(String part) {
		check();
	}

	/**
	 * Returns whether the connection to the store is open.
	 * @return whether it is connected
	 */
	default boolean isConnected() {
		return true;
	}

	/**
	 * Opens a new connection if the current one is closed; called while the store is
	 * unusable.
	 */
	default void reconnectIfClosed() {
	}

	/**
	 * Gives back the concurrency permits of a decision without waiting for the store to
	 * confirm, as while it is down.
	 * @param decision the decision
	 */
	/**
	 * Returns a decision of this store as this instance's own limits read it for a
	 * refund: with marks that mean to them what their own decisions' do, or none, so that
	 * they give back only what needs no mark (a bucket's tokens) and keep a window's
	 * count. The default keeps the store's marks.
	 * @param decision an allowed decision of this store
	 * @param cost the permits the call took
	 * @return the decision to refund to this instance's own limits
	 */
	default Decision forLocalRefund(Decision decision, long cost) {
		return decision;
	}

	default void releaseWithoutWaiting(Decision decision) {
		release(decision);
	}

}
