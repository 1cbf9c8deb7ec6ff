package dev.ratelimit.spring.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.ratelimit.spring.RateLimitConfigurationException;

/**
 * Reports an invalid rate-limit configuration at start-up: each property that is wrong
 * and why.
 */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RateLimitConfigurationException cause) {
		StringBuilder description = new StringBuilder("The rate-limit configuration is invalid:");
		cause.getProblems()
			.forEach((problem) -> description.append(System.lineSeparator())
				.append(System.lineSeparator())
				.append("    ")
				.append(problem.property())
				.append(System.lineSeparator())
				.append("        ")
				.append(problem.reason()));
		boolean policies = cause.getProblems()
			.stream()
			.anyMatch((problem) -> problem.property().startsWith("ratelimit.policies")
					|| problem.property().startsWith("ratelimit.filters"));
		return new FailureAnalysis(description.toString(),
				"Correct the properties (or @RateLimited annotations) named above, as each one's reason says."
						+ (policies ? " Each limit needs a 'rate' such as 5/1s (or 'max' for a concurrency limit);"
								+ " every policy that a filter or an annotation names must be defined under"
								+ " ratelimit.policies." : ""),
				cause);
	}

}
