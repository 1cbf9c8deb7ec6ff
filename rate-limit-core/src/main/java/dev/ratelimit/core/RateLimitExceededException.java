package dev.ratelimit.core;

import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Thrown when a call is rejected by a limit, carrying the {@link Decision}.
 */
public class RateLimitExceededException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final transient Decision decision;

	/**
	 * Creates an exception for a rejected decision.
	 * @param decision the decision
	 */
	public RateLimitExceededException(Decision decision) {
		super(message(decision), null, false, false);
		this.decision = Objects.requireNonNull(decision, "decision must not be null");
	}

	private static String message(Decision decision) {
		if (decision.source() == Decision.Source.FAILED_CLOSED) {
			return "Rate limit backend unavailable; call rejected";
		}
		String policies = decision.rejectedBy()
			.stream()
			.map((status) -> status.target().policy())
			.distinct()
			.collect(Collectors.joining(", "));
		if (decision.exceedsCapacity()) {
			return "Rate limit exceeded for " + policies + ": the call costs more than the limit can ever grant";
		}
		return "Rate limit exceeded for " + policies + "; retry after " + decision.retryAfter();
	}

	/**
	 * Returns the decision that rejected the call.
	 * @return the decision
	 */
	public Decision getDecision() {
		return this.decision;
	}

}
