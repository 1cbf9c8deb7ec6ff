package dev.ratelimit.spring.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.spring.RateLimitEvaluationException;

/**
 * Answers a {@link RateLimitExceededException} with 429 (503 for a backend failure),
 * {@code Retry-After}, the rate-limit headers and a problem body, and a
 * {@link RateLimitEvaluationException} with 400, for the filter and for
 * {@code @RateLimited} methods. Replace it with a bean of this type, or an advice of
 * higher precedence, to answer differently.
 */
@RestControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RateLimitExceptionHandler {

	private static final Log logger = LogFactory.getLog(RateLimitExceptionHandler.class);

	private final RateLimitHeaders headers;

	/**
	 * Creates the handler.
	 * @param headers the header writer
	 */
	public RateLimitExceptionHandler(RateLimitHeaders headers) {
		this.headers = headers;
	}

	/**
	 * Answers a rejected call.
	 * @param exception the rejection
	 * @param request the request
	 * @param response the response
	 * @return the problem response
	 */
	@ExceptionHandler(RateLimitExceededException.class)
	public ResponseEntity<ProblemDetail> handleRateLimitExceeded(RateLimitExceededException exception,
			HttpServletRequest request, HttpServletResponse response) {
		RequestLimits limits = RequestLimits.of(request);
		return RateLimitProblems.rejection(exception.getDecision(), (limits != null) ? limits.latest() : null,
				request.getRequestURI(), this.headers);
	}

	/**
	 * Answers a call whose cost or key expression could not be evaluated for its request.
	 * Nothing was charged. The exception, with the expression, is logged at debug level
	 * only: it is the client's doing, any client can cause it at will, and the response
	 * tells the client why; an expression that is wrong for every request is not answered
	 * here but fails as an error of the application (a {@code @RateLimited} method other
	 * than the handler throws an {@link IllegalStateException} that holds this exception
	 * as suppressed, not as its cause, so that this handler does not match it).
	 * @param exception the failure
	 * @param request the request
	 * @return the problem response
	 */
	@ExceptionHandler(RateLimitEvaluationException.class)
	public ResponseEntity<ProblemDetail> handleRateLimitEvaluation(RateLimitEvaluationException exception,
			HttpServletRequest request) {
		if (logger.isDebugEnabled()) {
			logger.debug("Answered 400: " + exception.getMessage(), exception);
		}
		return ResponseEntity.badRequest()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.body(RateLimitProblems.problem(exception, request));
	}

}
