package dev.ratelimit.spring.web;

import jakarta.servlet.ServletRequest;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitRequest;

/**
 * The rate-limit state of one servlet request ({@link RequestLimitState}) with the filter
 * that decides the policies it left for the handler method, kept in a request attribute
 * by the first {@link RateLimitFilter} of the request.
 */
final class RequestLimits extends RequestLimitState {

	static final String ATTRIBUTE = RequestLimits.class.getName();

	private volatile RateLimitFilter filter;

	RequestLimits(RateLimitFilter filter) {
		this.filter = filter;
	}

	/**
	 * Leaves a filter's policies for the handler method to decide; that filter decides
	 * them if the method is never invoked.
	 * @param filter the filter
	 * @param pending the policies and costs
	 */
	void deferTo(RateLimitFilter filter, PendingLimits pending) {
		this.filter = filter;
		defer(pending);
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

}
