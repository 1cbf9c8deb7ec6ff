package dev.ratelimit.core.redis;

import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * Decides whether a call may try Redis: always while Redis works; after a failure, not until a cool-down has passed,
 * and then by one caller at a time (a probe), whose success closes the gate again for everyone. So an outage costs
 * one timeout per cool-down instead of one per call, and recovery needs no background thread.
 */
final class BackendGate {

	private final long coolDownNanos;

	/** When the cool-down ends ({@link System#nanoTime()}), or {@code 0} while Redis works. */
	private volatile long coolingUntil;

	private final AtomicBoolean probing = new AtomicBoolean();

	/** The thread probing, set once it has won {@link #probing}. */
	private volatile @Nullable Thread prober;

	private volatile boolean available = true;

	BackendGate(long coolDownNanos) {
		this.coolDownNanos = coolDownNanos;
	}

	/**
	 * Returns whether the caller may try Redis. A caller that gets {@code true} must report the result with
	 * {@link #succeeded()}, {@link #failed()} or {@link #abandoned()}.
	 */
	boolean tryEnter() {
		long until = this.coolingUntil;
		if (until == 0) {
			return true;
		}
		if (System.nanoTime() - until < 0) {
			return false;
		}
		if (!this.probing.compareAndSet(false, true)) {
			return false;
		}
		this.prober = Thread.currentThread();
		return true;
	}

	void succeeded() {
		// every call that Redis answers comes here: it writes only what a failure changed, so that while Redis works
		// the callers of all threads only read the gate's fields, which then stay in every core's cache
		if (this.coolingUntil != 0) {
			this.coolingUntil = 0;
		}
		if (this.prober != null) {
			this.prober = null;
		}
		if (this.probing.get()) {
			this.probing.set(false);
		}
		if (!this.available) {
			this.available = true;
		}
	}

	void failed() {
		long until = System.nanoTime() + this.coolDownNanos;
		this.coolingUntil = (until != 0) ? until : 1;
		this.available = false;
		this.prober = null;
		this.probing.set(false);
	}

	/**
	 * Reports that a caller which entered learned nothing about Redis (its thread was interrupted, or it failed
	 * with an error of its own): if it was the probe, another caller may probe; any other caller's probe goes on.
	 */
	void abandoned() {
		if (this.prober == Thread.currentThread()) {
			this.prober = null;
			this.probing.set(false);
		}
	}

	/**
	 * Returns how long the current cool-down lasts, in microseconds (0 when Redis works).
	 */
	long coolDownRemainingMicros() {
		long until = this.coolingUntil;
		return (until == 0) ? 0 : Math.max(0, (until - System.nanoTime()) / 1000);
	}

	boolean isAvailable() {
		return this.available;
	}

}
