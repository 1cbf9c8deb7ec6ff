package dev.ratelimit.core.failure;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by a {@link RemoteRateLimiter} that could not decide a call, saying why, so that
 * the {@link FailurePolicyRateLimiter failure policy} knows whether its store is late or
 * down.
 */
public class BackendUnavailableException extends RuntimeException {

	/** Why a call was not decided. */
	public enum Reason {

		/**
		 * No answer in time while the connection is up: the store may still apply the
		 * call.
		 */
		LATE,

		/** An error reply, or no connection. */
		DOWN,

		/**
		 * The call could not be sent in time because another call for the same state was
		 * being answered; that call reports a failure, if there is one.
		 */
		BUSY

	}

	private final Reason reason;

	private final @Nullable String part;

	/**
	 * Creates an exception.
	 * @param reason why the call was not decided
	 * @param message the detail message
	 * @param cause the failure, if any
	 */
	public BackendUnavailableException(Reason reason, String message, Throwable cause) {
		this(reason, message, cause, null);
	}

	/**
	 * Creates an exception that names the part of the store which failed.
	 * @param reason why the call was not decided
	 * @param message the detail message
	 * @param cause the failure, if any
	 * @param part the part of the store that failed (see
	 * {@link RemoteRateLimiter#partsOf}), or {@code null} for the store as a whole
	 */
	public BackendUnavailableException(Reason reason, String message, Throwable cause, @Nullable String part) {
		super(message, cause);
		this.reason = Objects.requireNonNull(reason, "reason must not be null");
		this.part = part;
	}

	/**
	 * Creates an exception without a cause.
	 * @param reason why the call was not decided
	 * @param message the detail message
	 */
	public BackendUnavailableException(Reason reason, String message) {
		super(message);
		this.reason = Objects.requireNonNull(reason, "reason must not be null");
		this.part = null;
	}

	/**
	 * Returns why the call was not decided.
	 * @return the reason
	 */
	public Reason reason() {
		return this.reason;
	}

	/**
	 * Returns the part of the store that failed, such as a master of a Redis Cluster.
	 * @return the part, or {@code null} for the store as a whole
	 */
	public @Nullable String part() {
		return this.part;
	}

}
