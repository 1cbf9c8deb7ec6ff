package dev.ratelimit.spring;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.util.ClassUtils;

/**
 * Calls the {@link RateLimitListener}s so that none of them can change a decision or keep
 * a permit: a listener that throws is skipped for that call, logged, and reported to the
 * other listeners through {@link RateLimitListener#onListenerFailure(Class, Throwable)}.
 * Thread-safe.
 */
public final class RateLimitListeners {

	private static final Log logger = LogFactory.getLog(RateLimitListeners.class);

	// A listener that fails on every call would fill the log: its first failure is logged
	// at warn level with the stack
	// trace, later ones at most once a minute with the number of failures since, and at
	// debug level otherwise.
	private static final long WARNING_INTERVAL_NANOS = Duration.ofMinutes(1).toNanos();

	private final List<RateLimitListener> listeners;

	private final List<FailureLog> failureLogs;

	/**
	 * Creates the listeners.
	 * @param listeners the listeners, called in this order
	 */
	public RateLimitListeners(List<RateLimitListener> listeners) {
		this.listeners = List.copyOf(listeners);
		this.failureLogs = this.listeners.stream().map((listener) -> new FailureLog()).toList();
	}

	/**
	 * Returns whether there is no listener to call.
	 * @return whether the list is empty
	 */
	public boolean isEmpty() {
		return this.listeners.isEmpty();
	}

	/**
	 * Tells every listener of a decision.
	 * @param event the decision
	 */
	public void decided(RateLimitEvent event) {
		for (int i = 0; i < this.listeners.size(); i++) {
			try {
				this.listeners.get(i).onDecision(event);
			}
			catch (Throwable ex) {
				failed(i, "a decision", ex);
			}
		}
	}

	/**
	 * Tells every listener of a failure of the backend.
	 * @param backend the backend name, such as {@code redis}
	 * @param failure the failure
	 */
	public void backendFailed(String backend, Throwable failure) {
		for (int i = 0; i < this.listeners.size(); i++) {
			try {
				this.listeners.get(i).onBackendFailure(backend, failure);
			}
			catch (Throwable ex) {
				failed(i, "a backend failure", ex);
			}
		}
	}

	/**
	 * Tells every listener that a changed configuration was applied or refused.
	 * @param applied whether it was applied
	 */
	public void reloaded(boolean applied) {
		for (int i = 0; i < this.listeners.size(); i++) {
			try {
				this.listeners.get(i).onConfigurationReload(applied);
			}
			catch (Throwable ex) {
				failed(i, "a configuration reload", ex);
			}
		}
	}

	private void failed(int index, String what, Throwable failure) {
		if (failure instanceof VirtualMachineError error) {
			throw error;
		}
		Class<?> type = ClassUtils.getUserClass(this.listeners.get(index));
		this.failureLogs.get(index).log(type, what, failure);
		for (int i = 0; i < this.listeners.size(); i++) {
			if (i == index) {
				continue;
			}
			try {
				this.listeners.get(i).onListenerFailure(type, failure);
			}
			catch (Throwable ex) {
				if (ex instanceof VirtualMachineError error) {
					throw error;
				}
				// never passed on, so that two listeners cannot keep reporting each
				// other's failures
				if (logger.isDebugEnabled()) {
					logger.debug("RateLimitListener " + ClassUtils.getUserClass(this.listeners.get(i)).getName()
							+ " failed on the failure of " + type.getName(), ex);
				}
			}
		}
	}

	/**
	 * The failures of one listener, so that the log gets a warning at most once a minute.
	 */
	private static final class FailureLog {

		private final AtomicLong failures = new AtomicLong();

		private final AtomicLong warned = new AtomicLong();

		private final AtomicLong nextWarning = new AtomicLong(System.nanoTime());

		void log(Class<?> listener, String what, Throwable failure) {
			long count = this.failures.incrementAndGet();
			long now = System.nanoTime();
			if (count == 1) {
				this.nextWarning.set(now + WARNING_INTERVAL_NANOS);
				this.warned.set(1);
				logger.warn("RateLimitListener " + listener.getName() + " failed on " + what
						+ "; the decision stands. Its later failures are logged at most once a minute and counted by"
						+ " the metric ratelimit.listener.failures", failure);
				return;
			}
			long next = this.nextWarning.get();
			if (now - next >= 0 && this.nextWarning.compareAndSet(next, now + WARNING_INTERVAL_NANOS)) {
				long since = count - this.warned.getAndSet(count);
				logger.warn("RateLimitListener " + listener.getName() + " failed " + since
						+ " more times since its last warning; the latest, on " + what + ":", failure);
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("RateLimitListener " + listener.getName() + " failed on " + what, failure);
			}
		}

	}

}
