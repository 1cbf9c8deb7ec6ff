package dev.ratelimit.spring;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Thrown at start-up when the rate-limit configuration is invalid. Each problem names the
 * property (such as {@code ratelimit.policies.api.limits[0].rate}) or the annotated
 * method, and says what is wrong.
 */
public class RateLimitConfigurationException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final List<Problem> problems;

	/**
	 * Creates an exception for one or more problems.
	 * @param problems the problems, at least one
	 */
	public RateLimitConfigurationException(List<Problem> problems) {
		super(message(problems));
		this.problems = List.copyOf(problems);
	}

	/**
	 * Creates an exception for one problem.
	 * @param property the property or element that is wrong
	 * @param reason what is wrong with it
	 */
	public RateLimitConfigurationException(String property, String reason) {
		this(List.of(new Problem(property, reason)));
	}

	private static String message(List<Problem> problems) {
		if (problems.size() == 1) {
			return "Invalid rate-limit configuration: " + problems.get(0);
		}
		return "Invalid rate-limit configuration:" + problems.stream()
			.map((problem) -> System.lineSeparator() + " - " + problem)
			.collect(Collectors.joining());
	}

	/**
	 * Returns the problems found.
	 * @return the problems
	 */
	public List<Problem> getProblems() {
		return this.problems;
	}

	/**
	 * One thing wrong with the configuration.
	 *
	 * @param property the property path, such as
	 * {@code ratelimit.policies.api.limits[0].rate}, or the annotated element
	 * @param reason what is wrong and what would be right
	 */
	public record Problem(String property, String reason) {

		@Override
		public String toString() {
			return this.property + ": " + this.reason;
		}

	}

}
