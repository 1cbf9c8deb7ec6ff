package dev.ratelimit.core.redis;

import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * Decides how a call uses Redis, from what the last calls learned of it: Redis is up,
 * late or down.
 */
final class BackendGate {

	/** How a call uses Redis. */
	enum Route {

		/** Ask Redis and wait for the answer. */
		ASK,

		/** Redis answers late: decide here, send to Redis without waiting. */
		LATE,

		/** Redis is down: the failure mode decides. */
		DOWN

	}

	/*
	 * Late lasts a cool-down, after an answer came later than the timeout while the
	 * connection was up. Lateness may be this instance's own doing (a busy CPU delays the
	 * reading of answers), so a late call is never let through unlimited. After the
	 * cool-down, one call at a time (a probe) waits for Redis again; an answer in time
	 * ends the state. Down follows an error or a lost connection: no call waits for
	 * Redis, and a background check (not a caller) finds when Redis works again. While
	 * Redis is up, callers only read these fields, which then stay in every core's cache.
	 */

	private final long coolDownNanos;

	/**
	 * When the late state's cool-down ends ({@link System#nanoTime()}), or {@code 0} when
	 * Redis is not late.
	 */
	private volatile long lateUntil;

	private volatile boolean down;

	private final AtomicBoolean probing = new AtomicBoolean();

	/** The thread probing, set once it has won {@link #probing}. */
	private volatile @Nullable Thread prober;

	BackendGate(long coolDownNanos) {
		this.coolDownNanos = coolDownNanos;
	}

	/**
	 * Returns how the calling thread uses Redis. A caller that gets {@link Route#ASK}
	 * must report what it learned with {@link #succeeded()}, {@link #late()},
	 * {@link #failed()} or {@link #abandoned()}.
	 */
	Route enter() {
		if (this.down) {
			return Route.DOWN;
		}
		long until = this.lateUntil;
		if (until == 0) {
			return Route.ASK;
		}
		if (System.nanoTime() - until < 0 || !this.probing.compareAndSet(false, true)) {
			return Route.LATE;
		}
		this.prober = Thread.currentThread();
		return Route.ASK;
	}

	/**
	 * A caller's call was answered in time. That ends a down state (Redis answers), but a
	 * late state only if the caller was its probe: a call that asked before an answer
	 * came late, and was answered in time itself, says nothing of the calls after it, and
	 * ending the cool-down on it would make every caller wait again while answers hover
	 * around the timeout.
	 */
	void succeeded() {
		if (this.down) {
			this.down = false;
		}
		if (this.lateUntil != 0 && this.prober == Thread.currentThread()) {
			this.lateUntil = 0;
		}
		releaseProbe();
	}

	/**
	 * A check of this limiter's own (a health check, a recovery check) wrote to Redis in
	 * time: up again, whatever the state.
	 */
	void recovered() {
		if (this.lateUntil != 0) {
			this.lateUntil = 0;
		}
		if (this.down) {
			this.down = false;
		}
		releaseProbe();
	}

	/**
	 * Returns whether Redis is late and the cool-down of its last late answer has passed.
	 */
	boolean isLateAndCooledDown() {
		long until = this.lateUntil;
		return until != 0 && System.nanoTime() - until >= 0;
	}

	/**
	 * Redis answered later than the timeout while the connection was up: late for a
	 * cool-down, unless it is down.
	 */
	void late() {
		long until = System.nanoTime() + this.coolDownNanos;
		this.lateUntil = (until != 0) ? until : 1;
		releaseProbe();
	}

	/**
	 * Redis failed (an error, a lost connection): down until a check succeeds.
	 * @return whether Redis was up until now, so that the caller starts the checks
	 */
	boolean failed() {
		boolean wasUp = !this.down;
		this.down = true;
		releaseProbe();
		return wasUp;
	}

	/**
	 * Reports that a caller which asked learned nothing about Redis (its thread was
	 * interrupted, or it failed with an error of its own): if it was the probe, another
	 * caller may probe; any other caller's probe goes on.
	 */
	void abandoned() {
		if (this.prober == Thread.currentThread()) {
			this.prober = null;
			this.probing.set(false);
		}
	}

	/**
	 * Gives the probe back if the calling thread holds it.
	 */
	private void releaseProbe() {
		if (this.prober == Thread.currentThread()) {
			this.prober = null;
			this.probing.set(false);
		}
	}

	/**
	 * Returns how long Redis is expected to stay unusable, in microseconds: the rest of
	 * the late state's cool-down, or {@code whileDownMicros} when it is down; 0 when it
	 * is up.
	 */
	long unusableForMicros(long whileDownMicros) {
		if (this.down) {
			return whileDownMicros;
		}
		long until = this.lateUntil;
		return (until == 0) ? 0 : Math.max(0, (until - System.nanoTime()) / 1000);
	}

	boolean isDown() {
		return this.down;
	}

	boolean isLate() {
		return this.lateUntil != 0;
	}

}
