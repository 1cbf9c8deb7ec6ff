package dev.ratelimit.core.memory;

import java.util.List;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.algorithm.SpentShare;

import org.jspecify.annotations.Nullable;

/**
 * Per keyed limit of an {@link InMemoryRateLimiter}, until when the spent shares it took
 * over from its counterparts count under their own limits: a limit that holds nothing
 * spent takes over only a share that counts longer than that, so that it never takes one
 * share over twice (carried_shares.lua keeps the same time in a key). Bounded, and each
 * entry expires at its time; a forgotten entry can only make a limit take a share over
 * again, never hand out quota.
 */
final class CarriedShares {

	/** Until when the shares each state key took over count, in microseconds. */
	private final Cache<Object, Long> until;

	private final Policy<Object, Long> policy;

	CarriedShares(TimeSource timeSource, long maxKeys) {
		this.until = Caffeine.newBuilder()
			.maximumSize(maxKeys)
			.expireAfter(new UntilExpiry())
			.ticker(() -> timeSource.nowMicros() * 1000)
			.executor(Runnable::run)
			.build();
		this.policy = this.until.policy();
	}

	/**
	 * Returns until when the shares a state key took over count, or 0 if it took none
	 * over that still counts.
	 */
	long until(Object stateKey) {
		Long until = this.policy.getIfPresentQuietly(stateKey);
		return (until != null) ? until : 0;
	}

	/** Records that a state key took over shares that count until {@code until}. */
	void took(Object stateKey, long until) {
		this.until.asMap().merge(stateKey, until, Math::max);
	}

	/** Forgets every state key's shares. */
	void clear() {
		this.until.invalidateAll();
	}

	/**
	 * Returns what a limit of {@code capacity} that holds nothing spent takes over from
	 * its counterparts' shares: the permits of the largest share that counts later than
	 * {@code carriedUntil} (the shares it took over before), and until when the shares
	 * read count. {@code CarriedShares.take} in the Redis script decides alike.
	 * @param shares the counterparts' shares, those with nothing spent included
	 * @param carriedUntil until when the shares it took over before count, or 0
	 * @param capacity the limit's capacity
	 * @return what it takes over, or {@code null} for nothing
	 */
	static @Nullable Carry carry(List<SpentShare> shares, long carriedUntil, long capacity) {
		long permits = 0;
		long until = carriedUntil;
		for (SpentShare share : shares) {
			if (share.spent() > 0) {
				if (share.until() > carriedUntil) {
					permits = Math.max(permits, share.permitsOf(capacity));
				}
				until = Math.max(until, share.until());
			}
		}
		return (permits > 0) ? new Carry(permits, until) : null;
	}

	/**
	 * What a limit takes over.
	 *
	 * @param permits the permits it counts as spent
	 * @param until until when the shares it took them from count
	 */
	record Carry(long permits, long until) {
	}

	/** Expires an entry at its time. */
	private static final class UntilExpiry implements Expiry<Object, Long> {

		@Override
		public long expireAfterCreate(Object key, Long until, long currentTime) {
			return nanosUntil(until, currentTime);
		}

		@Override
		public long expireAfterUpdate(Object key, Long until, long currentTime, long currentDuration) {
			return nanosUntil(until, currentTime);
		}

		@Override
		public long expireAfterRead(Object key, Long until, long currentTime, long currentDuration) {
			return currentDuration;
		}

		private static long nanosUntil(long untilMicros, long currentNanos) {
			long micros = untilMicros - currentNanos / 1000;
			return (micros <= 0) ? 0 : ((micros > Long.MAX_VALUE / 1000) ? Long.MAX_VALUE : micros * 1000);
		}

	}

}
