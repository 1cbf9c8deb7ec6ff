package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.core.io.support.SpringFactoriesLoader.ArgumentResolver;

import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.testsupport.BootFailureAnalysis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Asserts that a context failed to start because of an invalid rate-limit configuration,
 * with a message and a failure analysis that name the property and say what is wrong: the
 * starter's own, or Spring Boot's for a value that does not bind.
 */
public final class ConfigurationFailures {

	private ConfigurationFailures() {
	}

	/**
	 * Asserts that a context failed to start on a property, for a reason.
	 * @param context the context
	 * @param property the property the failure names
	 * @param reason words of the reason the failure gives
	 */
	public static void assertFailure(ApplicationContextAssertProvider<?> context, String property, String reason) {
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

	/**
	 * Asserts a failure of Spring Boot's binder, as for a value that is none of an
	 * enum's: the analysis that Boot prints names the property and the value, and lists
	 * the values that would be right.
	 */
	static void assertBindFailure(ApplicationContextAssertProvider<?> context, String property, String value,
			List<String> validValues) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		BindException binding = find(failure, BindException.class);
		assertThat(binding).as("BindException in %s", failure).isNotNull();
		assertThat(binding.getName()).hasToString(property);
		assertThat(find(failure, RateLimitConfigurationException.class)).isNull();
		FailureAnalysis analysis = BootFailureAnalysis.of(failure, ArgumentResolver.none());
		assertThat(analysis).as("a failure analysis of %s", failure).isNotNull();
		String newLine = System.lineSeparator();
		assertThat(analysis.getDescription()).contains("Property: " + property).contains("Value: \"" + value + "\"");
		assertThat(analysis.getAction()).endsWith("The following values are valid:" + newLine + newLine + "    "
				+ String.join(newLine + "    ", validValues));
	}

	static RateLimitConfigurationException find(Throwable failure) {
		return find(failure, RateLimitConfigurationException.class);
	}

	private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
		for (Throwable candidate = failure; candidate != null; candidate = candidate.getCause()) {
			if (type.isInstance(candidate)) {
				return type.cast(candidate);
			}
		}
		return null;
	}

}
