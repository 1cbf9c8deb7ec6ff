package dev.ratelimit.core.memory;

import java.nio.ByteBuffer;
import java.util.Base64;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.TimeSource;

/**
 * The penalties running in an {@link InMemoryRateLimiter}: per policy and client key, the
 * time (µs) until which it is refused. Bounded, and each entry expires as its penalty
 * ends.
 */
final class Penalties {

	/** Until when each policy and client key is refused, in microseconds. */
	private final Cache<Object, Long> until;

	private final Policy<Object, Long> policy;

	Penalties(TimeSource timeSource, long maxKeys) {
		this.until = Caffeine.newBuilder()
			.maximumSize(maxKeys)
			.expireAfter(new UntilExpiry())
			.ticker(() -> timeSource.nowMicros() * 1000)
			.executor(Runnable::run)
			.build();
		this.policy = this.until.policy();
	}

	/**
	 * Returns the time left of the penalty of a limit's policy and client key at
	 * {@code now}, or 0 if none is running.
	 */
	long left(KeyedLimit target, long now) {
		Long end = this.policy.getIfPresentQuietly(keyOf(target));
		return (end != null && end > now) ? end - now : 0;
	}

	/**
	 * Refuses a limit's policy and client key for the limit's penalty from {@code now}; a
	 * penalty already running longer is kept.
	 */
	void impose(KeyedLimit target, long now) {
		long end = now + target.limit().penaltyMicros();
		this.until.asMap().merge(keyOf(target), end, Math::max);
	}

	/** Lifts the penalty of a limit's policy and client key, if one is running. */
	void lift(KeyedLimit target) {
		this.until.invalidate(keyOf(target));
	}

	/** Lifts every penalty. */
	void clear() {
		this.until.invalidateAll();
	}

	/**
	 * The key of a policy and client key; a client key longer than
	 * {@value HashedKey#MAX_PLAIN_CHARS} characters is held as its SHA-256, as a state
	 * key is.
	 */
	private static Object keyOf(KeyedLimit target) {
		String key = target.key();
		if (key.length() <= HashedKey.MAX_PLAIN_CHARS) {
			return new PenaltyKey(target.policy(), key, false);
		}
		HashedKey hashed = HashedKey.of(target);
		ByteBuffer digest = ByteBuffer.allocate(32)
			.putLong(hashed.digest0())
			.putLong(hashed.digest1())
			.putLong(hashed.digest2())
			.putLong(hashed.digest3());
		return new PenaltyKey(target.policy(), Base64.getEncoder().encodeToString(digest.array()), true);
	}

	/**
	 * A policy and client key, or the client key's digest.
	 *
	 * @param policy the policy name
	 * @param key the client key, or its digest in base64
	 * @param hashed whether {@code key} is a digest
	 */
	private record PenaltyKey(String policy, String key, boolean hashed) {
	}

	/** Expires an entry when its penalty ends. */
	private static final class UntilExpiry implements Expiry<Object, Long> {

		@Override
		public long expireAfterCreate(Object key, Long end, long currentTime) {
			return nanosUntil(end, currentTime);
		}

		@Override
		public long expireAfterUpdate(Object key, Long end, long currentTime, long currentDuration) {
			return nanosUntil(end, currentTime);
		}

		@Override
		public long expireAfterRead(Object key, Long end, long currentTime, long currentDuration) {
			return currentDuration;
		}

		private static long nanosUntil(long endMicros, long currentNanos) {
			long micros = endMicros - currentNanos / 1000;
			return (micros <= 0) ? 0 : ((micros > Long.MAX_VALUE / 1000) ? Long.MAX_VALUE : micros * 1000);
		}

	}

}
