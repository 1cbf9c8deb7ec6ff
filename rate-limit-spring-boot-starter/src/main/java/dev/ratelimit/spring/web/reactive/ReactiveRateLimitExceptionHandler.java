package dev.ratelimit.spring.web.reactive;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.web.RateLimitHeaders;
import dev.ratelimit.spring.web.RateLimitProblems;

/**
 * Answers a {@code @RateLimited} method's rejection in a WebFlux application as the
 * servlet side does: 429 (503 when the limiter is unavailable and refuses) with the
 * rate-limit headers, {@code Retry-After} and an RFC 9457 problem; and 400 for a cost or
 * key that cannot be evaluated for the request. An application's own
 * {@code @ExceptionHandler} for these exceptions, in an advice of higher precedence,
 * answers instead.
 */
@RestControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class ReactiveRateLimitExceptionHandler {

	private static final Log logger = LogFactory.getLog(ReactiveRateLimitExceptionHandler.class);

	private final RateLimitHeaders headers;

	/**
	 * Creates the handler.
	 * @param headers the writer of the rate-limit headers
	 */
	public ReactiveRateLimitExceptionHandler(RateLimitHeaders headers) {
		this.headers = headers;
	}

	/**
	 * Answers a rejected call.
	 * @param exception the rejection
	 * @param exchange the exchange
	 * @return the 429 or 503 answer
	 */
	@ExceptionHandler(RateLimitExceededException.class)
	public ResponseEntity<ProblemDetail> handleRateLimitExceeded(RateLimitExceededException exception,
			ServerWebExchange exchange) {
		ExchangeLimits limits = ExchangeLimits.of(exchange);
		return RateLimitProblems.rejection(exception.getDecision(), (limits != null) ? limits.latest() : null,
				exchange.getRequest().getPath().value(), this.headers);
	}

	/**
	 * Answers a call whose cost or key could not be evaluated for its request.
	 * @param exception the failure
	 * @param exchange the exchange
	 * @return the 400 answer
	 */
	@ExceptionHandler(RateLimitEvaluationException.class)
	public ResponseEntity<ProblemDetail> handleRateLimitEvaluation(RateLimitEvaluationException exception,
			ServerWebExchange exchange) {
		if (logger.isDebugEnabled()) {
			logger.debug("Answered 400: " + exception.getMessage(), exception);
		}
		return ResponseEntity.badRequest()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.body(RateLimitProblems.problemAt(exception, exchange.getRequest().getPath().value()));
	}

}
