package dev.ratelimit.spring.web.reactive;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.annotation.ReactiveWebInvocationSupport;
import dev.ratelimit.spring.web.PendingLimits;
import dev.ratelimit.spring.web.RateLimitHeaders;

/**
 * Connects the {@code @RateLimited} interceptor to a WebFlux exchange: the request is the
 * one the {@link RateLimitWebFilter} put in the subscriber's context, a handler method's
 * decision includes the policies the filter left for it, the headers are written to the
 * exchange's response, and permits and {@code count-if} charges are held until the
 * exchange completes. A method that does not return a publisher runs outside any
 * subscriber's context and is decided as a call outside a web request.
 */
public final class ReactiveInvocationSupport implements ReactiveWebInvocationSupport {

	private final RateLimitService service;

	private final RateLimitHeaders headers;

	/**
	 * Creates the support.
	 * @param service the decision path
	 * @param headers the writer of the rate-limit headers
	 */
	public ReactiveInvocationSupport(RateLimitService service, RateLimitHeaders headers) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.headers = Objects.requireNonNull(headers, "headers must not be null");
	}

	/**
	 * Returns {@code null}: a reactive request is not bound to a thread.
	 */
	@Override
	public @Nullable RateLimitRequest currentRequest() {
		return null;
	}

	@Override
	public @Nullable RateLimitRequest currentRequest(ContextView context) {
		return context.getOrDefault(RateLimitWebFilter.REQUEST_KEY, null);
	}

	@Override
	public boolean isHandler(RateLimitRequest request, Method method) {
		return request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE) instanceof HandlerMethod handler
				&& handler.getMethod().equals(method);
	}

	@Override
	public void takePending(RateLimitRequest request) {
		ExchangeLimits limits = limitsOf(request);
		if (limits != null) {
			limits.takeForHandler();
		}
	}

	@Override
	public RateLimitResult decideWithPending(RateLimitRequest request, List<AppliedPolicy> policies, long cost,
			long shadowCost, RateLimitContext context) {
		PendingLimits merged = merged(request, policies, cost, shadowCost);
		return this.service.decideApplied(merged.policies(), merged.cost(), merged.shadowCost(), context);
	}

	@Override
	public CompletableFuture<RateLimitResult> decideWithPendingAsync(RateLimitRequest request,
			List<AppliedPolicy> policies, long cost, long shadowCost, RateLimitContext context) {
		PendingLimits merged = merged(request, policies, cost, shadowCost);
		return this.service.decideAppliedAsync(merged.policies(), merged.cost(), merged.shadowCost(), context);
	}

	private static PendingLimits merged(RateLimitRequest request, List<AppliedPolicy> policies, long cost,
			long shadowCost) {
		ExchangeLimits limits = limitsOf(request);
		PendingLimits pending = (limits != null) ? limits.taken() : null;
		return (pending != null) ? pending.with(policies, cost, shadowCost)
				: new PendingLimits(policies, cost, shadowCost);
	}

	@Override
	public void restorePending(RateLimitRequest request) {
		ExchangeLimits limits = limitsOf(request);
		if (limits != null) {
			limits.restoreTaken();
		}
	}

	@Override
	public boolean onDecision(RateLimitRequest request, RateLimitResult result, boolean handler) {
		ServerWebExchange exchange = exchangeOf(request);
		if (handler && exchange != null && !exchange.getResponse().isCommitted()) {
			this.headers.write(result, exchange.getResponse().getHeaders()::set);
		}
		ExchangeLimits limits = limitsOf(request);
		return limits != null && limits.decided(result, true);
	}

	@Override
	public boolean holdCharge(RateLimitRequest request, RateLimitResult result) {
		ExchangeLimits limits = limitsOf(request);
		return limits != null && limits.holdCharge(result);
	}

	private static @Nullable ServerWebExchange exchangeOf(RateLimitRequest request) {
		return (request instanceof ReactiveRateLimitRequest reactive) ? reactive.exchange() : null;
	}

	private static @Nullable ExchangeLimits limitsOf(RateLimitRequest request) {
		ServerWebExchange exchange = exchangeOf(request);
		return (exchange != null) ? ExchangeLimits.of(exchange) : null;
	}

}
