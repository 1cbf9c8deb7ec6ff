package dev.ratelimit.spring;

/**
 * Called once for every decision the {@link RateLimitService} makes, and for every
 * failure of the backend, for example to record metrics. Implementations must be fast and
 * thread-safe, and should not throw: a listener that throws changes no decision and keeps
 * no permit, but it is logged and counted (see {@link RateLimitListeners}).
 */
@FunctionalInterface
public interface RateLimitListener {

	/**
	 * Receives a decision.
	 * @param event what was decided
	 */
	void onDecision(RateLimitEvent event);

	/**
	 * Receives a failure of the backend (such as a Redis timeout), which the failure mode
	 * then decided.
	 * @param backend the backend name, such as {@code redis}
	 * @param failure the failure
	 */
	default void onBackendFailure(String backend, Throwable failure) {
	}

	/**
	 * Receives the failure of another listener, which was skipped for that call: the
	 * decision stands.
	 * @param listener the class of the listener that threw
	 * @param failure what it threw
	 */
	default void onListenerFailure(Class<?> listener, Throwable failure) {
	}

	/**
	 * Receives the result of a reload of the configuration: applied whole, or refused
	 * whole while the running one stays.
	 * @param applied whether the new configuration was applied
	 */
	default void onConfigurationReload(boolean applied) {
	}

}
