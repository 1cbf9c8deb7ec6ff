package dev.ratelimit.spring.web;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitResult;

/**
 * The rate-limit state of one web request, whatever the stack: the policies a filter left
 * for the handler method (and those its interceptor took), the results whose concurrency
 * permits are given back when the response completes, those charged once the response is
 * known ({@code count-if}), and the latest result, which a 429 describes. Each stack's
 * filter keeps one per request ({@code RequestLimits} for servlets,
 * {@code web.reactive}'s for WebFlux); not for applications. A request may move between
 * threads, one at a time: the methods are synchronized for the memory effects, and never
 * contended.
 */
public class RequestLimitState {

	// created on first use: most requests hold no permit and owe no charge
	private @Nullable List<RateLimitResult> held;

	private @Nullable List<RateLimitResult> charges;

	private @Nullable PendingLimits pending;

	private @Nullable PendingLimits taken;

	private @Nullable RateLimitResult latest;

	private boolean completed;

	/**
	 * Leaves the filter's policies for the handler method to decide.
	 * @param pending the policies and costs
	 */
	public synchronized void defer(PendingLimits pending) {
		this.pending = pending;
	}

	/**
	 * Takes the policies left for the handler method, if it has not taken them.
	 * @return the policies, or {@code null} if none are left
	 */
	public synchronized @Nullable PendingLimits takePending() {
		PendingLimits taken = this.pending;
		this.pending = null;
		return taken;
	}

	/**
	 * Moves the pending policies to the handler method's interceptor, which decides them
	 * with its own ({@link #taken()}) or gives them back ({@link #restoreTaken()}).
	 */
	public synchronized void takeForHandler() {
		this.taken = takePending();
	}

	/**
	 * Returns the policies the handler method's interceptor took.
	 * @return the policies, or {@code null}
	 */
	public synchronized @Nullable PendingLimits taken() {
		return this.taken;
	}

	/**
	 * Gives the taken policies back, to be decided when the request ends: the
	 * interceptor's decision failed for the application's reasons.
	 */
	public synchronized void restoreTaken() {
		if (this.taken != null) {
			this.pending = this.taken;
			this.taken = null;
		}
	}

	/**
	 * Records a decision made for the request.
	 * @param result the result
	 * @param holdUntilComplete whether its concurrency permits are to be released when
	 * the response completes
	 * @return whether they will be: {@code false} once the response has completed (as for
	 * a handler method that an ERROR dispatch invokes after the filter has released the
	 * request's permits), when the caller must release them
	 */
	public synchronized boolean decided(RateLimitResult result, boolean holdUntilComplete) {
		this.latest = result;
		if (!holdUntilComplete || this.completed) {
			return false;
		}
		if (result.isAllowed()) {
			if (this.held == null) {
				this.held = new ArrayList<>(1);
			}
			this.held.add(result);
		}
		return true;
	}

	/**
	 * Holds the charge that an allowed result owes its {@code count-if} policies until
	 * the response completes.
	 * @param result the result
	 * @return whether the charge is held: {@code false} once the response has completed,
	 * or for a result without such a charge
	 */
	public synchronized boolean holdCharge(RateLimitResult result) {
		if (this.completed || !result.chargesAfterResponse()) {
			return false;
		}
		if (this.charges == null) {
			this.charges = new ArrayList<>(1);
		}
		this.charges.add(result);
		return true;
	}

	/**
	 * Returns the results whose {@code count-if} charges the response settles, once it
	 * has completed.
	 * @return the results to charge
	 */
	public synchronized List<RateLimitResult> takeCharges() {
		List<RateLimitResult> taken = (this.charges != null) ? List.copyOf(this.charges) : List.of();
		this.charges = null;
		return taken;
	}

	/**
	 * Returns the latest result decided for the request, which a 429 describes.
	 * @return the result, or {@code null}
	 */
	public synchronized @Nullable RateLimitResult latest() {
		return this.latest;
	}

	/**
	 * Marks the response completed and returns the results whose permits it held; a later
	 * decision is not held.
	 * @return the results to release
	 */
	public synchronized List<RateLimitResult> complete() {
		this.completed = true;
		List<RateLimitResult> taken = (this.held != null) ? List.copyOf(this.held) : List.of();
		this.held = null;
		return taken;
	}

}
