package dev.ratelimit.spring.web;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitResult;

/**
 * The RFC 9457 problem responses of rejected calls: 429 Too Many Requests when a limit
 * rejects, 503 Service Unavailable when the backend failed and {@code on-backend-failure}
 * is {@code deny}. A call that costs more than a limit can ever grant is answered 429
 * too, but without {@code Retry-After}, since waiting never helps. A call whose cost or
 * key expression cannot be evaluated for the request is answered 400 Bad Request.
 */
public final class RateLimitProblems {

	/** The problem type of a 429, from the IANA HTTP Problem Types registry. */
	public static final URI QUOTA_EXCEEDED = URI
		.create("https://iana.org/assignments/http-problem-types#quota-exceeded");

	/** The problem property listing the policies that rejected the call. */
	public static final String VIOLATED_POLICIES = "violated-policies";

	/** The problem property with the seconds to wait before retrying. */
	public static final String RETRY_AFTER = "retryAfter";

	private RateLimitProblems() {
	}

	/**
	 * Returns the status of a rejected call.
	 * @param decision the decision
	 * @return 503 for a backend failure, else 429
	 */
	public static HttpStatus status(Decision decision) {
		return (decision.source() == Decision.Source.FAILED_CLOSED) ? HttpStatus.SERVICE_UNAVAILABLE
				: HttpStatus.TOO_MANY_REQUESTS;
	}

	/**
	 * Returns the seconds a client should wait before retrying: the decision's
	 * retry-after rounded up, at least 1.
	 * @param decision the decision
	 * @return the seconds, or {@code null} when the call can never pass
	 */
	public static @Nullable Long retryAfterSeconds(Decision decision) {
		if (decision.source() != Decision.Source.FAILED_CLOSED && decision.exceedsCapacity()) {
			return null;
		}
		return Math.max(1, RateLimitHeaders.seconds(decision.retryAfterMicros()));
	}

	/**
	 * Returns the problem describing a rejected call.
	 * @param decision the decision
	 * @param request the request, whose path becomes the problem's instance
	 * @return the problem
	 */
	public static ProblemDetail problem(Decision decision, @Nullable HttpServletRequest request) {
		return problemAt(decision, (request != null) ? request.getRequestURI() : null);
	}

	/**
	 * Returns the problem describing a rejected call, whatever the web stack.
	 * @param decision the decision
	 * @param path the path of the request as received, which becomes the problem's
	 * instance, or {@code null} for none
	 * @return the problem
	 */
	public static ProblemDetail problemAt(Decision decision, @Nullable String path) {
		HttpStatus status = status(decision);
		Long retryAfter = retryAfterSeconds(decision);
		ProblemDetail problem = ProblemDetail.forStatus(status);
		if (status == HttpStatus.SERVICE_UNAVAILABLE) {
			problem.setTitle("Service Unavailable");
			problem.setDetail("Rate limiting is unavailable, so the request was not processed; retry after "
					+ retryAfter + " " + unit(retryAfter));
		}
		else {
			List<String> violated = RateLimitResult.violatedPolicies(decision);
			problem.setType(QUOTA_EXCEEDED);
			problem.setTitle("Too Many Requests");
			problem.setDetail(detail(decision, violated, retryAfter));
			problem.setProperty(VIOLATED_POLICIES, violated);
		}
		if (retryAfter != null) {
			problem.setProperty(RETRY_AFTER, retryAfter);
		}
		URI instance = instance(path);
		if (instance != null) {
			problem.setInstance(instance);
		}
		return problem;
	}

	/**
	 * Returns the answer to a rejected call, whatever the web stack: 429 (503 when the
	 * limiter is unavailable and refuses) with the rate-limit headers of the request's
	 * latest result (when it is this decision's), {@code Retry-After} and the problem.
	 * @param decision the rejecting decision
	 * @param latest the latest result decided for the request, if any
	 * @param path the path of the request as received, or {@code null} for none
	 * @param headers the writer of the rate-limit headers
	 * @return the answer
	 */
	public static ResponseEntity<ProblemDetail> rejection(Decision decision, @Nullable RateLimitResult latest,
			@Nullable String path, RateLimitHeaders headers) {
		RateLimitResult result = (latest != null && latest.decision() == decision) ? latest
				: new RateLimitResult(decision, null, "", 0, RateLimitResult.violatedPolicies(decision));
		ResponseEntity.BodyBuilder builder = ResponseEntity.status(status(decision))
			.contentType(MediaType.APPLICATION_PROBLEM_JSON);
		headers.write(result, (name, value) -> builder.header(name, value));
		Long retryAfter = retryAfterSeconds(decision);
		if (retryAfter != null) {
			builder.header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		}
		return builder.body(problemAt(decision, path));
	}

	/**
	 * Returns the problem describing a call whose cost or key expression could not be
	 * evaluated for its request: 400, with a detail that names the policy and says why in
	 * fixed words, never the request's values.
	 * @param failure the failure
	 * @param request the request, whose path becomes the problem's instance
	 * @return the problem
	 */
	public static ProblemDetail problem(RateLimitEvaluationException failure, @Nullable HttpServletRequest request) {
		return problemAt(failure, (request != null) ? request.getRequestURI() : null);
	}

	/**
	 * Returns the problem describing a call whose cost or key expression could not be
	 * evaluated, whatever the web stack.
	 * @param failure the failure
	 * @param path the path of the request as received, which becomes the problem's
	 * instance, or {@code null} for none
	 * @return the problem
	 */
	public static ProblemDetail problemAt(RateLimitEvaluationException failure, @Nullable String path) {
		ProblemDetail problem = ProblemDetail.forStatus(HttpStatus.BAD_REQUEST);
		problem.setTitle("Bad Request");
		problem.setDetail(failure.getDetail());
		URI instance = instance(path);
		if (instance != null) {
			problem.setInstance(instance);
		}
		return problem;
	}

	private static String detail(Decision decision, List<String> violated, @Nullable Long retryAfter) {
		String policies = ((violated.size() == 1) ? "policy " : "policies ") + String.join(", ", violated);
		if (retryAfter == null) {
			long capacity = decision.rejectedBy()
				.stream()
				.filter(LimitStatus::exceedsCapacity)
				.mapToLong(LimitStatus::limit)
				.min()
				.orElse(0);
			return "The request costs more than " + policies + " can ever grant (at most " + capacity
					+ " at once); retrying will not help";
		}
		return "Rate limit exceeded for " + policies + "; retry after " + retryAfter + " " + unit(retryAfter);
	}

	private static String unit(@Nullable Long seconds) {
		return (seconds != null && seconds == 1) ? "second" : "seconds";
	}

	private static @Nullable URI instance(@Nullable String path) {
		if (path == null) {
			return null;
		}
		try {
			return new URI(path);
		}
		catch (URISyntaxException ex) {
			return null;
		}
	}

}
