package dev.ratelimit.spring;

import java.util.Locale;

/**
 * What happened to one policy in a decision, as recorded by a {@link RateLimitListener}.
 */
public enum RateLimitOutcome {

	/** The call was allowed. */
	ALLOWED,

	/** The call was rejected. */
	REJECTED,

	/**
	 * The call was refused because the policy's client serves a penalty: the policy
	 * rejected it earlier.
	 */
	PENALIZED,

	/** The call was allowed after a shaping delay. */
	DELAYED,

	/** A shadow policy would have rejected the call; it was allowed. */
	SHADOW_REJECTED,

	/** The backend failed and the call was allowed. */
	FAILED_OPEN,

	/** The backend failed and the call was rejected. */
	FAILED_CLOSED;

	/**
	 * Returns the name used as a metric tag, such as {@code shadow-rejected}.
	 * @return the tag value
	 */
	public String tagValue() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
