package dev.ratelimit.core.internal.algorithm;

import java.util.Iterator;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

/**
 * At most {@code max} permits in flight per key. Each allowed call holds a lease until it
 * is released or, as a safety net against a lost release (a crashed caller), until its
 * lease time passes; a call still in flight renews its lease, which then expires a lease
 * time after the renewal. When rejected, the retry-after is the time until enough leases
 * expire if none is released nor renewed, an upper bound.
 */
final class ConcurrencyLimit implements LimitAlgorithm<LeaseState> {

	/*
	 * The work of a call is O(m) for the m leases held: evaluate and release read them,
	 * apply drops the expired ones. m is at most max (so at most Limit.MAX_CONCURRENCY):
	 * each lease holds at least one permit, an allowed call leaves only live leases
	 * behind it, and a rejected call adds none. Reaching it takes m calls in flight at
	 * once, unlike a sliding log, which m quick calls fill. concurrency_limit.lua reads
	 * the live leases only, m of them at most.
	 */

	static final ConcurrencyLimit INSTANCE = new ConcurrencyLimit();

	/**
	 * Lease ids are unique in the JVM, not per state: a key's state may be dropped and
	 * created again while a caller still holds a lease of the old state, and its late
	 * release must not remove someone else's lease.
	 */
	private static final AtomicLong LEASE_IDS = new AtomicLong();

	private ConcurrencyLimit() {
	}

	@Override
	public LeaseState fresh(Limit limit, long now) {
		return new LeaseState();
	}

	@Override
	public Outcome evaluate(Limit limit, LeaseState state, long now, long cost) {
		long max = limit.capacity();
		long active = 0;
		long lastExpiry = now;
		for (LeaseState.Entry lease : state.leases) {
			if (lease.expiresAt() > now) {
				active += lease.cost();
				lastExpiry = Math.max(lastExpiry, lease.expiresAt());
			}
		}
		// more in flight than max after max was lowered: none left until enough end
		long left = Math.max(0, max - active);
		if (cost > max) {
			return Outcome.neverAllowed(left, lastExpiry - now);
		}
		if (active + cost <= max) {
			long reset = (cost > 0) ? limit.leaseTimeMicros() : lastExpiry - now;
			return Outcome.allowed(max - active - cost, reset);
		}
		long excess = active + cost - max;
		long freed = 0;
		long retry = 0;
		for (LeaseState.Entry lease : state.leases) {
			if (lease.expiresAt() > now) {
				freed += lease.cost();
				if (freed >= excess) {
					retry = lease.expiresAt() - now;
					break;
				}
			}
		}
		return Outcome.rejected(left, retry, lastExpiry - now);
	}

	@Override
	public @Nullable String apply(Limit limit, LeaseState state, long now, long cost) {
		state.leases.removeIf((lease) -> lease.expiresAt() <= now);
		if (cost == 0) {
			return null;
		}
		String id = Long.toString(LEASE_IDS.incrementAndGet());
		state.leases.add(new LeaseState.Entry(id, now + limit.leaseTimeMicros(), cost));
		return id;
	}

	/**
	 * Renews a lease that is still held (even one past its expiry that no call has
	 * dropped yet, as in Redis): it moves to the end of the list, since it now expires
	 * last, so that the list stays in the order of expiry that Redis's sorted set keeps.
	 */
	@Override
	public void renew(Limit limit, LeaseState state, String leaseId, long now) {
		for (Iterator<LeaseState.Entry> leases = state.leases.iterator(); leases.hasNext();) {
			LeaseState.Entry lease = leases.next();
			if (lease.id().equals(leaseId)) {
				leases.remove();
				state.leases.add(new LeaseState.Entry(leaseId, now + limit.leaseTimeMicros(), lease.cost()));
				return;
			}
		}
	}

	/**
	 * Does nothing: a concurrency limit's permits come back when its lease is released.
	 */
	@Override
	public void refund(Limit limit, LeaseState state, long now, long cost, long mark) {
	}

	@Override
	public void release(Limit limit, LeaseState state, String leaseId, long now) {
		for (Iterator<LeaseState.Entry> leases = state.leases.iterator(); leases.hasNext();) {
			if (leases.next().id().equals(leaseId)) {
				leases.remove();
				return;
			}
		}
	}

}
