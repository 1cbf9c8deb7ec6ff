package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Lease;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.algorithm.LimitAlgorithm;
import dev.ratelimit.core.internal.algorithm.Outcome;

/**
 * The in-memory backend's decision procedure ({@code InMemoryRateLimiter}: state created
 * at first sight, every limit evaluated at one instant, applied once per distinct keyed
 * limit only if all allow) over the same algorithm classes, but with state kept for ever
 * instead of in an expiring cache. It is the oracle of the differential tests: state past
 * its retention is indistinguishable from fresh state, so dropping it must not change any
 * decision, and keeping it makes the oracle independent of cache eviction timing.
 */
final class ReferenceLimiter implements RateLimiter {

	private final Map<KeyedLimit, Object> states = new HashMap<>();

	private final TimeSource clock;

	ReferenceLimiter(TimeSource clock) {
		this.clock = clock;
	}

	@SuppressWarnings("unchecked")
	private static LimitAlgorithm<Object> algorithm(KeyedLimit target) {
		return (LimitAlgorithm<Object>) LimitAlgorithm.of(target.limit());
	}

	@Override
	public synchronized Decision acquire(List<KeyedLimit> limits, long cost) {
		long now = this.clock.nowMicros();
		List<LimitStatus> statuses = new ArrayList<>();
		boolean allowed = true;
		for (KeyedLimit target : limits) {
			Object state = this.states.computeIfAbsent(target, (t) -> algorithm(t).fresh(t.limit(), now));
			Outcome outcome = algorithm(target).evaluate(target.limit(), state, now, cost);
			allowed &= outcome.allowed();
			statuses.add(outcome.statusOf(target));
		}
		List<Lease> leases = new ArrayList<>();
		if (allowed) {
			List<KeyedLimit> applied = new ArrayList<>();
			for (KeyedLimit target : limits) {
				if (!applied.contains(target)) {
					applied.add(target);
					String id = algorithm(target).apply(target.limit(), this.states.get(target), now, cost);
					if (id != null) {
						leases.add(new Lease(target, id, cost));
					}
				}
			}
		}
		return Decision.of(statuses, leases);
	}

	@Override
	public synchronized List<LimitStatus> inspect(List<KeyedLimit> limits) {
		long now = this.clock.nowMicros();
		List<LimitStatus> statuses = new ArrayList<>();
		for (KeyedLimit target : limits) {
			Object state = this.states.get(target);
			if (state == null) {
				state = algorithm(target).fresh(target.limit(), now);
			}
			statuses.add(algorithm(target).evaluate(target.limit(), state, now, 0).statusOf(target));
		}
		return statuses;
	}

	@Override
	public synchronized void release(Decision decision) {
		for (Lease lease : decision.leases()) {
			Object state = this.states.get(lease.target());
			if (state != null) {
				algorithm(lease.target()).release(lease.target().limit(), state, lease.id(), this.clock.nowMicros());
			}
		}
	}

	@Override
	public synchronized void reset(KeyedLimit limit) {
		this.states.remove(limit);
	}

}
