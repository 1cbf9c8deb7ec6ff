package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

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
	 *
	 * One fill of a reservoir is on its way at a time. A call that finds it on its way
	 * waits for it and tries again, so that one fill serves the calls behind it: a caller
	 * that waits blocks, at most its timeout; an asynchronous caller chains on the fill,
	 * so that no thread waits. No lock is held across a call to Redis: a reservoir's
	 * monitor guards its fields only while they change, and the fill on its way is a
	 * future that any thread may complete (the answer of an asynchronous fill comes on
	 * Lettuce's event loop).
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
	 * What a call does next with the reservoir of its key.
	 */
	sealed interface Turn permits Answered, Fill, AwaitFill {

	}

	/**
	 * Answered here: from the permits held, or refused as Redis refused the last fill of
	 * as many permits.
	 *
	 * @param status the status to report
	 */
	record Answered(LimitStatus status) implements Turn {

	}

	/**
	 * This call fills the reservoir: it asks Redis for {@code need} permits, applies the
	 * answer with {@link Reservoir#filled}, and then, answered or not, calls
	 * {@link Reservoir#end}.
	 *
	 * @param need the permits to ask for
	 * @param done completed once the fill has ended
	 */
	record Fill(long need, CompletableFuture<Void> done) implements Turn {

	}

	/**
	 * Another call's fill is on its way: try again once it has ended.
	 *
	 * @param fill completed (never exceptionally) once that fill has ended
	 */
	record AwaitFill(CompletableFuture<Void> fill) implements Turn {

	}

	/**
	 * The unused permits of one key. Its fields change under its monitor, never across a
	 * call to Redis; {@link #take} starts at most one fill at a time, and every call that
	 * finds it on its way waits for its {@link #end}. Time ({@code now}) is this
	 * instance's clock in µs.
	 */
	static final class Reservoir {

		/** The fill on its way to Redis, or {@code null}. */
		private @Nullable CompletableFuture<Void> fill;

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
		 * Returns what a call does next: answered here, or wait for the fill on its way,
		 * or, if none is, fill the reservoir itself.
		 * @param target the keyed limit
		 * @param cost the permits the call takes
		 * @param now the time
		 * @return the call's turn
		 */
		synchronized Turn take(KeyedLimit target, long cost, long now) {
			Turn turn = peek(target, cost, now);
			if (turn != null) {
				return turn;
			}
			CompletableFuture<Void> started = new CompletableFuture<>();
			this.fill = started;
			return new Fill(shortfall(cost), started);
		}

		/**
		 * Returns what a call does next as {@link #take} does, but starts no fill.
		 * @param target the keyed limit
		 * @param cost the permits the call takes
		 * @param now the time
		 * @return the call's turn, or {@code null} if it must ask Redis
		 */
		synchronized @Nullable Turn peek(KeyedLimit target, long cost, long now) {
			LimitStatus served = tryTake(target, cost, now);
			if (served == null) {
				served = refusal(target, shortfall(cost), now);
			}
			if (served != null) {
				return new Answered(served);
			}
			CompletableFuture<Void> onItsWay = this.fill;
			return (onItsWay != null) ? new AwaitFill(onItsWay) : null;
		}

		/**
		 * Ends a fill, answered or not, so that the calls waiting for it try again; does
		 * nothing for a fill already ended.
		 * @param ended the fill
		 */
		void end(Fill ended) {
			synchronized (this) {
				if (this.fill == ended.done()) {
					this.fill = null;
				}
			}
			ended.done().complete(null);
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
		synchronized @Nullable LimitStatus tryTake(KeyedLimit target, long cost, long now) {
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
		synchronized long shortfall(long cost) {
			return cost - this.permits;
		}

		/**
		 * Refuses a call here while Redis's last refusal of as many permits holds: a
		 * bucket only refills at its rate, so Redis would refuse it too, with the same
		 * retry-after less the time since (exact for the same need, which is why another
		 * need still asks Redis). Only a reset on another instance or a cluster give-back
		 * to this key can make Redis allow sooner; then this refuses at most until the
		 * retry-after. Answering here keeps callers queued on an exhausted key from
		 * taking turns at Redis one fill after another, where those at the back would
		 * time out and fall back (by default: allowed).
		 * @param target the keyed limit
		 * @param need the permits a fill would ask for
		 * @param now the time
		 * @return the refusal to report, or {@code null} if Redis must be asked
		 */
		synchronized @Nullable LimitStatus refusal(KeyedLimit target, long need, long now) {
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
		synchronized LimitStatus filled(KeyedLimit target, long need, long cost, ScriptReply.KeyOutcome outcome,
				long now) {
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
		 * Spends every permit left; for tests.
		 */
		synchronized void drain() {
			this.permits = 0;
		}

		private long resetAfter(long now) {
			return Math.max(0, this.resetAt - now);
		}

	}

}
