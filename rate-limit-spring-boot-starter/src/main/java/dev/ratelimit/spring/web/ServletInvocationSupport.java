package dev.ratelimit.spring.web;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;

import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.annotation.WebInvocationSupport;

/**
 * Connects {@code @RateLimited} methods to the servlet request they run in, through the
 * state that the {@link RateLimitFilter} keeps for each request.
 */
public final class ServletInvocationSupport implements WebInvocationSupport {

	private final RateLimitService service;

	private final RateLimitHeaders headers;

	/**
	 * Creates the support.
	 * @param service the decision path
	 * @param headers the header writer
	 */
	public ServletInvocationSupport(RateLimitService service, RateLimitHeaders headers) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.headers = Objects.requireNonNull(headers, "headers must not be null");
	}

	@Override
	public @Nullable RateLimitRequest currentRequest() {
		return (RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes)
				? new ServletRateLimitRequest(attributes.getRequest()) : null;
	}

	@Override
	public boolean isHandler(RateLimitRequest request, Method method) {
		return request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE) instanceof HandlerMethod handler
				&& handler.getMethod().equals(method);
	}

	@Override
	public void takePending(RateLimitRequest request) {
		RequestLimits limits = RequestLimits.of(request);
		if (limits != null) {
			limits.takeForHandler();
		}
	}

	@Override
	public RateLimitResult decideWithPending(RateLimitRequest request, List<AppliedPolicy> policies, long cost,
			long shadowCost, RateLimitContext context) {
		RequestLimits limits = RequestLimits.of(request);
		PendingLimits pending = (limits != null) ? limits.taken() : null;
		if (pending == null) {
			return this.service.decideApplied(policies, cost, shadowCost, context);
		}
		PendingLimits merged = pending.with(policies, cost, shadowCost);
		return this.service.decideApplied(merged.policies(), merged.cost(), merged.shadowCost(), context);
	}

	@Override
	public void restorePending(RateLimitRequest request) {
		RequestLimits limits = RequestLimits.of(request);
		if (limits != null) {
			limits.restoreTaken();
		}
	}

	@Override
	public boolean onDecision(RateLimitRequest request, RateLimitResult result, boolean handler) {
		if (handler && RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes) {
			HttpServletResponse response = attributes.getResponse();
			if (response != null) {
				this.headers.write(response, result);
			}
		}
		RequestLimits limits = RequestLimits.of(request);
		if (limits == null) {
			return false;
		}
		return limits.decided(result, handler);
	}

	@Override
	public boolean holdCharge(RateLimitRequest request, RateLimitResult result) {
		RequestLimits limits = RequestLimits.of(request);
		return limits != null && limits.holdCharge(result);
	}

}
