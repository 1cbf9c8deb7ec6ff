package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * The local reservoirs of two-tier mode: per token-bucket key, the permits this instance took from Redis in advance
 * and has not used yet. A reservoir never holds more than {@code N - 1} permits after a call (a renewal takes at most
 * {@code N} and the call that triggered it uses at least one), and its permits lapse after the bucket's window, so
 * that stale permits are not spent long after they were taken. It also remembers Redis's last refusal, so that calls
 * that would be refused again are answered without a round trip.
 */
final class LeasedPermits {

	private static final long MAX_RESERVOIRS = 100_000;

	private final long size;

	private final Cache<String, Reservoir> reservoirs = Caffeine.newBuilder()
		.maximumSize(MAX_RESERVOIRS)
		.expireAfterAccess(Duration.ofHours(1))
		.build();

	LeasedPermits(long size) {
		this.size = size;
	}

	long size() {
		return this.size;
	}

	Reservoir reservoir(String key) {
		return this.reservoirs.get(key, (k) -> new Reservoir());
	}

	void forget(String key) {
		this.reservoirs.invalidate(key);
	}

	/**
	 * The unused permits of one key, guarded by its lock; the lock is also held while renewing, so that one renewal
	 * serves the callers that queue behind it.
	 */
	static final class Reservoir {

		final ReentrantLock lock = new ReentrantLock();

		long permits;

		long expiresAt;

		/** What Redis had left at the last renewal, for the status of calls served locally. */
		long redisRemaining;

		long resetAt;

		/**
		 * Until when (this instance's clock, µs) Redis refuses {@link #refusedNeed} permits or more: the time of its
		 * last refusal plus that refusal's retry-after; 0 after a grant.
		 */
		long refusedUntil;

		/** The permits the last refused renewal asked for. */
		long refusedNeed;

	}

}
