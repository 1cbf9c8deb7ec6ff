package dev.ratelimit.spring.web;

import jakarta.servlet.ServletRequest;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitRequest;

/**
 * The rate-limit state of one servlet request ({@link RequestLimitState}) with its
 * filter, kept in a request attribute by the {@link RateLimitFilter}.
 */
final class RequestLimits extends RequestLimitState {

	static final String ATTRIBUTE = RequestLimits.class.getName();

	private final RateLimitFilter filter;

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

}
