package dev.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when a {@link Limit} or a {@link Rate} is given a value it cannot take. It names
 * the {@link Limit.Parameter parameter} that holds the value, so that a caller can point
 * at it (configuration names its property) without reading the message, which is for
 * people.
 */
public final class InvalidLimitException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final Limit.@Nullable Parameter parameter;

	private final transient @Nullable Object value;

	InvalidLimitException(Limit.@Nullable Parameter parameter, @Nullable Object value, String message) {
		super(message);
		this.parameter = parameter;
		this.value = value;
	}

	/**
	 * Returns the parameter whose value is wrong, or {@code null} when no one value is:
	 * the limit's parameters are each valid but together too large or too fine-grained to
	 * count exactly.
	 * @return the parameter, or {@code null} for the limit as a whole
	 */
	public Limit.@Nullable Parameter parameter() {
		return this.parameter;
	}

	/**
	 * Returns the value that was refused, as it was given (the rate's text, a
	 * {@code Long} capacity, a {@code Duration}, a {@link LeakMode}), or {@code null}
	 * when the problem is a value that is missing.
	 * @return the value, or {@code null}
	 */
	public @Nullable Object value() {
		return this.value;
	}

}
