package dev.ratelimit.spring.annotation;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

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
	 * Takes the policies that the filter left for the handler method to decide.
	 * @param request the request
	 * @return the policies, or {@code null} if there are none; a second call returns
	 * {@code null}
	 */
	@Nullable PendingLimits takePending(RateLimitRequest request);

	/**
	 * Gives back the policies taken with {@link #takePending(RateLimitRequest)} when the
	 * handler method's decision failed for a reason of the application's (an exception
	 * other than a cost or key that cannot be evaluated for the request), so that the
	 * filter decides them as for a handler method that is never invoked: the request is
	 * not free.
	 * @param request the request
	 * @param pending the policies that were taken
	 */
	void restorePending(RateLimitRequest request, PendingLimits pending);

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

}
