package dev.ratelimit.core.failure;

/**
 * What the {@link FailurePolicyRateLimiter failure policy} knows of its store, or of one
 * part of it (a master of a Redis Cluster): it decides calls, it answers late, or it is
 * down.
 */
public enum BackendState {

	/** The store decides calls. */
	UP,

	/**
	 * The store answered later than the timeout while its connection was up: calls are
	 * decided by this instance's own limits (or refused under
	 * {@link dev.ratelimit.core.FailureMode#DENY DENY}) until a probe answers in time.
	 */
	LATE,

	/**
	 * The store failed (an error, a refused or lost connection): the failure mode decides
	 * calls until a check writes to it again.
	 */
	DOWN

}
