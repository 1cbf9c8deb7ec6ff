package dev.ratelimit.spring.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Has the {@link RateLimitFilter} decide the policies it left for a {@code @RateLimited}
 * handler method when the request fails before that method is invoked (its arguments do
 * not bind, an interceptor throws). The request is charged, its error response carries
 * the rate-limit headers, and it is answered 429 or 400 where the filter would have been.
 * Resolves nothing else.
 */
public final class PendingLimitsExceptionResolver implements HandlerExceptionResolver, Ordered {

	private static final Log logger = LogFactory.getLog(PendingLimitsExceptionResolver.class);

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		RequestLimits limits = RequestLimits.of(request);
		if (limits == null) {
			return null;
		}
		try {
			return limits.filter().decideLeftover(limits, request, response, true) ? new ModelAndView() : null;
		}
		catch (IOException | RuntimeException failure) {
			// the request's own failure stays the one its resolvers answer (a failing key
			// bean of the filter's policy
			// fails here again, after failing the handler's decision)
			logger.warn("Failure while deciding the rate limits of a request that failed with ["
					+ ex.getClass().getName() + "]", failure);
			return null;
		}
	}

	// Right after Spring Boot's DefaultErrorAttributes, which only records the failure
	// for the error attributes and
	// resolves nothing, so the failure is recorded even when this resolver answers it;
	// and before every resolver that
	// answers a failure, such as the one of @ExceptionHandler methods.
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE + 1;
	}

}
