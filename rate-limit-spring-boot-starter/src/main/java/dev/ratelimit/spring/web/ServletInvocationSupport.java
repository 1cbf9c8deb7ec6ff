package dev.ratelimit.spring.web;

import java.lang.reflect.Method;

import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;

import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.annotation.PendingLimits;
import dev.ratelimit.spring.annotation.WebInvocationSupport;

/**
 * Connects {@code @RateLimited} methods to the servlet request they run in, through the
 * state that the {@link RateLimitFilter} keeps for each request.
 */
public final class ServletInvocationSupport implements WebInvocationSupport {

	private final RateLimitHeaders headers;

	/**
	 * Creates the support.
	 * @param headers the header writer
	 */
	public ServletInvocationSupport(RateLimitHeaders headers) {
		this.headers = headers;
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
	public @Nullable PendingLimits takePending(RateLimitRequest request) {
		RequestLimits limits = RequestLimits.of(request);
		return (limits != null) ? limits.takePending() : null;
	}

	@Override
	public void restorePending(RateLimitRequest request, PendingLimits pending) {
		RequestLimits limits = RequestLimits.of(request);
		if (limits != null) {
			limits.defer(pending);
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

}
