package dev.ratelimit.spring;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.Lease;
import dev.ratelimit.core.RateLimiter;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Renews the concurrency leases of the decisions held by calls still in flight, every
 * third of the shortest lease time of each decision, until the call releases them: a call
 * keeps its permit however long it runs (a stream, a long poll, a slow upload), and a
 * lease time only bounds what a crashed instance leaves behind. One background thread,
 * started with the first decision that holds a lease.
 */
final class LeaseRenewals implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LeaseRenewals.class);

	/** The shortest interval between renewals of one decision. */
	private static final long MIN_PERIOD_MICROS = 1_000;

	private final RateLimiter limiter;

	private final Supplier<ScheduledExecutorService> schedulerFactory;

	private volatile @Nullable ScheduledExecutorService scheduler;

	/**
	 * The renewals of the decisions held, by decision (compared by identity:
	 * {@link Decision} has no equals).
	 */
	private final Map<Decision, ScheduledFuture<?>> held = new ConcurrentHashMap<>();

	private volatile boolean closed;

	LeaseRenewals(RateLimiter limiter) {
		this(limiter, () -> Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-lease-renewal");
			thread.setDaemon(true);
			return thread;
		}));
	}

	LeaseRenewals(RateLimiter limiter, Supplier<ScheduledExecutorService> schedulerFactory) {
		this.limiter = limiter;
		this.schedulerFactory = schedulerFactory;
	}

	/**
	 * Starts renewing the leases of a decision, if it holds any, until
	 * {@link #release(Decision)}.
	 */
	void hold(Decision decision) {
		if (decision.leases().isEmpty() || this.closed) {
			// closed: the application is stopping, and its permits lapse after their
			// lease time
			return;
		}
		long period = Long.MAX_VALUE;
		for (Lease lease : decision.leases()) {
			period = Math.min(period, lease.target().limit().leaseTimeMicros() / 3);
		}
		period = Math.max(MIN_PERIOD_MICROS, period);
		try {
			this.held.put(decision,
					scheduler().scheduleAtFixedRate(() -> renew(decision), period, period, TimeUnit.MICROSECONDS));
		}
		catch (RejectedExecutionException ex) {
			// closed meanwhile: as above
		}
	}

	/**
	 * Stops renewing a decision's leases; a renewal on its way may still land, which
	 * finds its lease released and does nothing.
	 */
	void release(Decision decision) {
		ScheduledFuture<?> renewal = this.held.remove(decision);
		if (renewal != null) {
			renewal.cancel(false);
		}
	}

	/**
	 * Returns the number of decisions whose leases are renewed.
	 */
	int size() {
		return this.held.size();
	}

	private void renew(Decision decision) {
		try {
			this.limiter.renew(decision);
		}
		catch (RuntimeException ex) {
			// the next renewal tries again; should all fail for a lease time, the lease
			// lapses
			if (logger.isDebugEnabled()) {
				logger.debug("Could not renew a rate-limit lease", ex);
			}
		}
	}

	private ScheduledExecutorService scheduler() {
		ScheduledExecutorService current = this.scheduler;
		if (current == null) {
			synchronized (this) {
				current = this.scheduler;
				if (current == null) {
					current = this.schedulerFactory.get();
					this.scheduler = current;
				}
			}
		}
		return current;
	}

	@Override
	public void close() {
		this.closed = true;
		ScheduledExecutorService current = this.scheduler;
		if (current != null) {
			current.shutdownNow();
		}
		this.held.clear();
	}

}
