package dev.ratelimit.spring.web;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.ServletRequest;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;

/**
 * The rate-limit state of one request, kept in a request attribute by the
 * {@link RateLimitFilter}: the filter, the policies left for the handler method (and
 * those its interceptor took), the results whose concurrency permits are released when
 * the response completes, those charged after the response ({@code count-if}), and the
 * latest result, which the 429 response describes.
 */
final class RequestLimits {

	static final String ATTRIBUTE = RequestLimits.class.getName();

	private final RateLimitFilter filter;

	private final List<RateLimitResult> held = new ArrayList<>(1);

	private final List<RateLimitResult> charges = new ArrayList<>(0);

	private @Nullable PendingLimits pending;

	private @Nullable PendingLimits taken;

	private @Nullable RateLimitResult latest;

	private boolean completed;

	RequestLimits(RateLimitFilter filter) {
		this.filter = filter;
	}

	static @Nullable RequestLimits of(ServletRequest request) {
		return (request.getAttribute(ATTRIBUTE) instanceof RequestLimits limits) ? limits : null;
	}

	static @Nullable RequestLimits of(RateLimitRequest request) {
		return (request.getAttribute(ATTRIBUTE) instanceof RequestLimits limits) ? limits : null;
	}

	RateLimitFilter filter() {
		return this.filter;
	}

	synchronized void defer(PendingLimits pending) {
		this.pending = pending;
	}

	synchronized @Nullable PendingLimits takePending() {
		PendingLimits taken = this.pending;
		this.pending = null;
		return taken;
	}

	/**
	 * Moves the pending policies to the handler method's interceptor, which decides them
	 * with its own ({@link #taken()}) or gives them back ({@link #restoreTaken()}).
	 */
	synchronized void takeForHandler() {
		this.taken = takePending();
	}

	synchronized @Nullable PendingLimits taken() {
		return this.taken;
	}

	synchronized void restoreTaken() {
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
	synchronized boolean decided(RateLimitResult result, boolean holdUntilComplete) {
		this.latest = result;
		if (!holdUntilComplete || this.completed) {
			return false;
		}
		if (result.isAllowed()) {
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
	synchronized boolean holdCharge(RateLimitResult result) {
		if (this.completed || !result.chargesAfterResponse()) {
			return false;
		}
		this.charges.add(result);
		return true;
	}

	/**
	 * Returns the results whose {@code count-if} charges the response settles, once it
	 * has completed.
	 * @return the results to charge
	 */
	synchronized List<RateLimitResult> takeCharges() {
		List<RateLimitResult> taken = new ArrayList<>(this.charges);
		this.charges.clear();
		return taken;
	}

	synchronized @Nullable RateLimitResult latest() {
		return this.latest;
	}

	/**
	 * Marks the response completed and returns the results whose permits it held; a later
	 * decision is not held.
	 * @return the results to release
	 */
	synchronized List<RateLimitResult> complete() {
		this.completed = true;
		List<RateLimitResult> taken = new ArrayList<>(this.held);
		this.held.clear();
		return taken;
	}

}
