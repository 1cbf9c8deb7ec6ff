package dev.ratelimit.core;

import java.util.Locale;

/**
 * What a leaky bucket does with a call that arrives while the bucket holds water.
 */
public enum LeakMode {

	/** Admit the call at once if it fits in the bucket, else reject it. */
	POLICE,

	/**
	 * Admit the call if it fits, but delay it until the water ahead of it has drained.
	 */
	SHAPE;

	/**
	 * Returns the mode with the given configuration name ({@code police} or
	 * {@code shape}), ignoring case.
	 * @param name the name
	 * @return the mode
	 * @throws InvalidLimitException for {@link Limit.Parameter#MODE} if no mode has that
	 * name
	 */
	public static LeakMode fromConfigName(String name) {
		String wanted = name.trim().toUpperCase(Locale.ROOT);
		for (LeakMode mode : values()) {
			if (mode.name().equals(wanted)) {
				return mode;
			}
		}
		throw new InvalidLimitException(Limit.Parameter.MODE, name,
				"Unknown leaky-bucket mode '" + name + "'; expected police or shape");
	}

	@Override
	public String toString() {
		return name().toLowerCase(Locale.ROOT);
	}

}
