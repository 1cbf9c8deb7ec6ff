package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;

/**
 * The local reservoirs of two-tier mode: per token-bucket key, the permits this instance
 * took from Redis in advance and has not used yet, and Redis's last refusal.
 */
final class PermitReservoirs {

	/*
	 * A reservoir never holds more than N - 1 permits after a call (a fill takes at most
	 * N and the call that triggered it uses at least one), and its permits lapse after
	 * the bucket's window, so that stale permits are not spent long after they were
	 * taken. The last refusal lets calls that would be refused again be answered without
	 * a round trip. Both hold for the limit they were filled under only: when a call
	 * comes with other parameters (a reloaded configuration), the permits are dropped,
	 * spent as Redis counts them (spent stays spent), and the refusal forgotten.
	 */

	private static final long MAX_RESERVOIRS = 100_000;

	private final long size;

	private final Cache<String, Reservoir> reservoirs = Caffeine.newBuilder()
		.maximumSize(MAX_RESERVOIRS)
		.expireAfterAccess(Duration.ofHours(1))
		.build();

	PermitReservoirs(long size) {
		this.size = size;
	}

	/**
	 * Returns the most permits one fill takes from Redis.
	 */
	long size() {
		return this.size;
	}

	Reservoir reservoir(String key) {
		return this.reservoirs.get(key, (k) -> new Reservoir());
	}

	void forget(String key) {
		this.reservoirs.invalidate(key);
	}

	void forgetAll() {
		this.reservoirs.invalidateAll();
	}

	/**
	 * The unused permits of one key. Callers hold its lock from {@link #tryTake} to
	 * {@link #filled}, so that one fill serves the callers that queue behind it. Time
	 * ({@code now}) is this instance's clock in µs.
	 */
	static final class Reservoir {

		private final ReentrantLock lock = new ReentrantLock();

		/** The limit of the last fill, or {@code null} before the first. */
		private @Nullable Limit filledUnder;

		private long permits;

		private long expiresAt;

		/**
		 * What Redis had left at the last fill, for the status of calls served locally.
		 */
		private long redisRemaining;

		private long resetAt;

		/**
		 * Until when Redis refuses {@link #refusedNeed} permits or more: the time of its
		 * last refusal plus that refusal's retry-after; 0 after a grant.
		 */
		private long refusedUntil;

		/** The permits the last refused fill asked for. */
		private long refusedNeed;

		/**
		 * Waits for this reservoir's lock until a deadline.
		 * @param deadlineNanos the deadline, on {@link System#nanoTime()}
		 * @return whether the caller now holds the lock
		 * @throws InterruptedException if the caller was interrupted while it waited
		 */
		boolean lockBefore(long deadlineNanos) throws InterruptedException {
			return this.lock.tryLock(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}

		void unlock() {
			this.lock.unlock();
		}

		/**
		 * Serves a call from this reservoir, after its permits lapsed if their window has
		 * passed or its limit changed.
		 * @param target the keyed limit
		 * @param cost the permits the call takes
		 * @param now the time
		 * @return the status to report if the reservoir had enough permits, else
		 * {@code null}
		 */
		@Nullable LimitStatus tryTake(KeyedLimit target, long cost, long now) {
			Limit filledUnder = this.filledUnder;
			if (filledUnder != null && filledUnder != target.limit() && !filledUnder.equals(target.limit())) {
				this.permits = 0;
				this.refusedUntil = 0;
				this.filledUnder = null;
			}
			if (this.expiresAt <= now) {
				this.permits = 0;
			}
			if (this.permits < cost) {
				return null;
			}
			this.permits -= cost;
			return new LimitStatus(target, true, this.permits + this.redisRemaining, 0, resetAfter(now), 0, false);
		}

		/**
		 * Returns the permits a fill must ask Redis for so that a call can be served;
		 * after {@link #tryTake}.
		 * @param cost the permits the call takes
		 * @return the permits this reservoir lacks
		 */
		long shortfall(long cost) {
			return cost - this.permits;
		}

		/**
		 * Refuses a call here while Redis's last refusal of as many permits holds: a
		 * bucket only refills at its rate, so Redis would refuse it too, with the same
		 * retry-after less the time since (exact for the same need, which is why another
		 * need still asks Redis). Only a reset on another instance or a cluster give-back
		 * to this key can make Redis allow sooner; then this refuses at most until the
		 * retry-after. Answering here keeps callers queued on an exhausted key from
		 * taking turns at Redis under the lock, where those at the back would time out
		 * and fall back (by default: allowed).
		 * @param target the keyed limit
		 * @param need the permits a fill would ask for
		 * @param now the time
		 * @return the refusal to report, or {@code null} if Redis must be asked
		 */
		@Nullable LimitStatus refusal(KeyedLimit target, long need, long now) {
			if (now >= this.refusedUntil || need != this.refusedNeed) {
				return null;
			}
			return new LimitStatus(target, false, this.permits + this.redisRemaining, this.refusedUntil - now,
					resetAfter(now), 0, false);
		}

		/**
		 * Applies Redis's answer to a fill: a grant adds its permits less the call's cost
		 * and clears the refusal; a refusal is remembered for its retry-after.
		 * @param target the keyed limit
		 * @param need the permits the fill asked for
		 * @param cost the permits the call takes
		 * @param outcome Redis's answer, with the permits granted as its mark
		 * @param now the time the call started
		 * @return the status to report: Redis's, with what this reservoir holds added to
		 * the remaining count
		 */
		LimitStatus filled(KeyedLimit target, long need, long cost, ScriptReply.KeyOutcome outcome, long now) {
			this.filledUnder = target.limit();
			if (outcome.allowed()) {
				this.permits = this.permits + outcome.mark() - cost;
				this.expiresAt = now + target.limit().windowMicros();
				this.refusedUntil = 0;
			}
			else {
				this.refusedUntil = now + outcome.retryAfterMicros();
				this.refusedNeed = need;
			}
			this.redisRemaining = outcome.remaining();
			this.resetAt = now + outcome.resetAfterMicros();
			return outcome.withRemaining(outcome.remaining() + this.permits).status(target);
		}

		/**
		 * Returns the lock callers hold; tests hold it to stand for another caller's
		 * fill.
		 */
		ReentrantLock lock() {
			return this.lock;
		}

		/**
		 * Spends every permit left; for tests.
		 */
		void drain() {
			this.permits = 0;
		}

		private long resetAfter(long now) {
			return Math.max(0, this.resetAt - now);
		}

	}

}
