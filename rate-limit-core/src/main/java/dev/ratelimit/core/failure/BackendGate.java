package dev.ratelimit.core.failure;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Decides how a call uses the backend, from what the last calls learned of it: the
 * backend is up, late or down.
 */
final class BackendGate {

	/** How a call uses the backend. */
	enum Route {

		/** Ask the backend and wait for the answer. */
		ASK,

		/** The backend answers late: decide here, send to the backend without waiting. */
		LATE,

		/** The backend is down: the failure mode decides. */
		DOWN

	}

	/*
	 * Late lasts a cool-down, after an answer came later than the timeout while the
	 * connection was up. Lateness may be this instance's own doing (a busy CPU delays the
	 * reading of answers), so a late call is never let through unlimited. After the
	 * cool-down, one call at a time (a probe) waits for the backend again; an answer in
	 * time ends the state. Down follows an error or a lost connection: no call waits for
	 * the backend, and a background check (not a caller) finds when the backend works
	 * again. While the backend is up, callers only read these fields, which then stay in
	 * every core's cache.
	 */

	private final long coolDownNanos;

	/**
	 * When the late state's cool-down ends (the gate's {@code nanoTime}), or {@code 0}
	 * when the backend is not late.
	 */
	private volatile long lateUntil;

	private volatile boolean down;

	private final AtomicBoolean probing = new AtomicBoolean();

	/**
	 * The caller probing, set once it has won {@link #probing}: its thread, for a caller
	 * that waits, or a token of its own for an asynchronous call, whose answer comes on
	 * another thread.
	 */
	private volatile @Nullable Object prober;

	private final LongSupplier nanoTime;

	BackendGate(long coolDownNanos) {
		this(coolDownNanos, System::nanoTime);
	}

	BackendGate(long coolDownNanos, LongSupplier nanoTime) {
		this.coolDownNanos = coolDownNanos;
		this.nanoTime = nanoTime;
	}

	/**
	 * Returns whether the backend is up: neither late nor down.
	 */
	boolean isUp() {
		return !this.down && this.lateUntil == 0;
	}

	/**
	 * Returns how a caller uses the backend. A caller that gets {@link Route#ASK} must
	 * report what it learned with {@link #succeeded}, {@link #late}, {@link #failed} or
	 * {@link #abandoned}, passing the same caller.
	 * @param caller what identifies the call until it reports: the calling thread, or an
	 * object of its own for an asynchronous call
	 */
	Route enter(Object caller) {
		if (this.down) {
			return Route.DOWN;
		}
		long until = this.lateUntil;
		if (until == 0) {
			return Route.ASK;
		}
		if (this.nanoTime.getAsLong() - until < 0 || !this.probing.compareAndSet(false, true)) {
			return Route.LATE;
		}
		this.prober = caller;
		return Route.ASK;
	}

	/**
	 * A caller's call was answered in time. That ends a down state (the backend answers),
	 * but a late state only if the caller was its probe: a call that asked before an
	 * answer came late, and was answered in time itself, says nothing of the calls after
	 * it, and ending the cool-down on it would make every caller wait again while answers
	 * hover around the timeout.
	 */
	void succeeded(Object caller) {
		if (this.down) {
			this.down = false;
		}
		if (this.lateUntil != 0 && this.prober == caller) {
			this.lateUntil = 0;
		}
		releaseProbe(caller);
	}

	/**
	 * The limiter's own probe (the recovery check, once a late state's cool-down has
	 * passed) wrote to the backend in time: up again, whatever the state.
	 */
	void recovered() {
		if (this.lateUntil != 0) {
			this.lateUntil = 0;
		}
		if (this.down) {
			this.down = false;
		}
	}

	/**
	 * A check made from outside the limiter (a health check) wrote to the backend in
	 * time: that ends a down state, as the recovery check would at its next run, but not
	 * a late one. A late state's cool-down holds whatever is polled meanwhile: only the
	 * limiter's own probe, once the cool-down has passed, ends it, so that a health
	 * endpoint polled hard cannot make every caller wait again for a backend that
	 * answered late a moment ago.
	 */
	void answered() {
		if (this.down) {
			this.down = false;
		}
	}

	/**
	 * Returns whether the backend is late and the cool-down of its last late answer has
	 * passed.
	 */
	boolean isLateAndCooledDown() {
		long until = this.lateUntil;
		return until != 0 && this.nanoTime.getAsLong() - until >= 0;
	}

	/**
	 * The backend answered later than the timeout while the connection was up: late for a
	 * cool-down, unless it is down.
	 */
	void late(Object caller) {
		long until = this.nanoTime.getAsLong() + this.coolDownNanos;
		this.lateUntil = (until != 0) ? until : 1;
		releaseProbe(caller);
	}

	/**
	 * The backend failed (an error, a lost connection): down until a check succeeds.
	 * @return whether the backend was up until now, so that the caller starts the checks
	 */
	boolean failed(Object caller) {
		boolean wasUp = !this.down;
		this.down = true;
		releaseProbe(caller);
		return wasUp;
	}

	/**
	 * Reports that a caller which asked learned nothing about the backend (its thread was
	 * interrupted, or it failed with an error of its own): if it was the probe, another
	 * caller may probe; any other caller's probe goes on.
	 */
	void abandoned(Object caller) {
		releaseProbe(caller);
	}

	/**
	 * Gives the probe back if the caller holds it.
	 */
	private void releaseProbe(Object caller) {
		if (this.prober == caller) {
			this.prober = null;
			this.probing.set(false);
		}
	}

	/**
	 * Returns how long the backend is expected to stay unusable, in microseconds: the
	 * rest of the late state's cool-down, or {@code whileDownMicros} when it is down; 0
	 * when it is up.
	 */
	long unusableForMicros(long whileDownMicros) {
		if (this.down) {
			return whileDownMicros;
		}
		long until = this.lateUntil;
		return (until == 0) ? 0 : Math.max(0, (until - this.nanoTime.getAsLong()) / 1000);
	}

	boolean isDown() {
		return this.down;
	}

	/**
	 * Returns what the gate knows of the backend: down, late (past its cool-down too,
	 * until a probe answers in time), or up.
	 */
	BackendState state() {
		if (this.down) {
			return BackendState.DOWN;
		}
		return (this.lateUntil != 0) ? BackendState.LATE : BackendState.UP;
	}

	boolean isLate() {
		return this.lateUntil != 0;
	}

}
