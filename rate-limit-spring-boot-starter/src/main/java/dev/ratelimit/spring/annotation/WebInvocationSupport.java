package dev.ratelimit.spring.annotation;

import java.lang.reflect.Method;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;

/**
 * Connects the {@code @RateLimited} interceptor to the web request a call runs in, so
 * that a handler method's decision includes the policies of the filters that matched its
 * request, writes the rate-limit headers, and holds concurrency permits until the
 * response completes. Implemented by the web support of the starter.
 */
public interface WebInvocationSupport {

	/**
	 * Returns the web request of the current thread.
	 * @return the request, or {@code null} outside a web request
	 */
	@Nullable RateLimitRequest currentRequest();

	/**
	 * Returns whether a method is the handler method of a request.
	 * @param request the request
	 * @param method the invoked method
	 * @return whether the method handles the request
	 */
	boolean isHandler(RateLimitRequest request, Method method);

	/**
	 * Takes the policies that the filter left for the request's handler method, so that
	 * the filter no longer decides them: {@link #decideWithPending} adds them to the
	 * method's, or {@link #restorePending} gives them back. Taking again replaces what
	 * was taken.
	 * @param request the request
	 */
	void takePending(RateLimitRequest request);

	/**
	 * Decides a call of the request's handler method in one decision with the policies
	 * taken from the filter, if any: the filter's policies then the method's, each cost
	 * the higher of the two.
	 * @param request the request
	 * @param policies the method's policies
	 * @param cost the permits the call takes from the enforced policies
	 * @param shadowCost the permits the call takes from the shadow policies
	 * @param context the call
	 * @return the result
	 */
	RateLimitResult decideWithPending(RateLimitRequest request, List<AppliedPolicy> policies, long cost,
			long shadowCost, RateLimitContext context);

	/**
	 * Gives back the policies taken with {@link #takePending} when the handler method's
	 * decision failed for a reason of the application's (an exception other than a cost
	 * or key that cannot be evaluated for the request), so that the filter decides them
	 * as for a handler method that is never invoked: the request is not free.
	 * @param request the request
	 */
	void restorePending(RateLimitRequest request);

	/**
	 * Receives the decision of a call made in a web request, before the method runs or
	 * throws.
	 * @param request the request
	 * @param result the result
	 * @param handler whether the method is the request's handler
	 * @return whether the web layer releases the result's concurrency permits when the
	 * response completes; if false, the caller releases them when the method returns
	 */
	boolean onDecision(RateLimitRequest request, RateLimitResult result, boolean handler);

	/**
	 * Holds the {@code count-if} charge of an allowed call made in a web request until
	 * the response completes, when the response that the condition reads is known.
	 * @param request the request
	 * @param result the result, which {@link RateLimitResult#chargesAfterResponse()
	 * charges after the response}
	 * @return whether the web layer charges it; if false, the caller charges it, without
	 * a response, when the method returns or throws
	 */
	default boolean holdCharge(RateLimitRequest request, RateLimitResult result) {
		return false;
	}

}
