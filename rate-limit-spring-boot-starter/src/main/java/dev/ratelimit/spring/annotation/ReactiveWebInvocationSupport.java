package dev.ratelimit.spring.annotation;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;

/**
 * Connects the {@code @RateLimited} interceptor to the reactive web request that
 * subscribes to a method's {@code Mono} or {@code Flux}: a reactive request is not bound
 * to a thread, so it is found in the subscriber's context, and the decision is made
 * without blocking. Implemented by the starter's WebFlux support.
 */
public interface ReactiveWebInvocationSupport extends WebInvocationSupport {

	/**
	 * Returns the web request whose handling subscribed, from the subscriber's context.
	 * @param context the subscriber's context
	 * @return the request, or {@code null} outside a web request
	 */
	@Nullable RateLimitRequest currentRequest(ContextView context);

	/**
	 * Decides a handler method's call as
	 * {@link #decideWithPending(RateLimitRequest, List, long, long, RateLimitContext)}
	 * does, without blocking.
	 * @param request the request
	 * @param policies the method's policies
	 * @param cost the method's cost for its enforced policies
	 * @param shadowCost the method's cost for its shadow policies
	 * @param context the call
	 * @return the result, once decided
	 */
	CompletableFuture<RateLimitResult> decideWithPendingAsync(RateLimitRequest request, List<AppliedPolicy> policies,
			long cost, long shadowCost, RateLimitContext context);

}
