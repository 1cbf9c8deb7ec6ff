package dev.ratelimit.spring.autoconfigure;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;

import dev.ratelimit.spring.RateLimitConfigurationException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Asserts that a context failed to start because of an invalid rate-limit configuration, with a message and a
 * failure analysis that name the property and say what is wrong.
 */
final class ConfigurationFailures {

	private ConfigurationFailures() {
	}

	static void assertFailure(ApplicationContextAssertProvider<?> context, String property, String reason) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		RateLimitConfigurationException exception = find(failure);
		assertThat(exception).as("RateLimitConfigurationException in %s", failure).isNotNull();
		assertThat(exception.getProblems()).anySatisfy((problem) -> {
			assertThat(problem.property()).isEqualTo(property);
			assertThat(problem.reason()).contains(reason);
		});
		assertThat(exception.getMessage()).contains(property + ": ").contains(reason);
		FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).contains(property).contains(reason);
	}

	static RateLimitConfigurationException find(Throwable failure) {
		Throwable candidate = failure;
		while (candidate != null) {
			if (candidate instanceof RateLimitConfigurationException exception) {
				return exception;
			}
			candidate = candidate.getCause();
		}
		return null;
	}

}
