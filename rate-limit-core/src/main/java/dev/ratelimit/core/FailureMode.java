package dev.ratelimit.core;

import java.util.Locale;

/**
 * What a limiter does with a call when its backend (Redis) fails: an error, or a
 * connection refused or lost. A call that Redis answers too late is never allowed
 * unlimited: it is decided by local limits, or refused in {@link #DENY}.
 */
public enum FailureMode {

	/** Allow the call ({@link Decision.Source#FAILED_OPEN}). */
	ALLOW,

	/** Reject the call ({@link Decision.Source#FAILED_CLOSED}). */
	DENY,

	/**
	 * Decide the call with in-memory limits local to this instance
	 * ({@link Decision.Source#LOCAL_FALLBACK}).
	 */
	LOCAL;

	/**
	 * Returns the mode with the given configuration name ({@code allow}, {@code deny} or
	 * {@code local}).
	 * @param name the name, in any case
	 * @return the mode
	 * @throws IllegalArgumentException if no mode has that name
	 */
	public static FailureMode fromConfigName(String name) {
		String wanted = name.trim().toUpperCase(Locale.ROOT);
		for (FailureMode mode : values()) {
			if (mode.name().equals(wanted)) {
				return mode;
			}
		}
		throw new IllegalArgumentException("Unknown failure mode '" + name + "'; expected allow, deny or local");
	}

	@Override
	public String toString() {
		return name().toLowerCase(Locale.ROOT);
	}

}
