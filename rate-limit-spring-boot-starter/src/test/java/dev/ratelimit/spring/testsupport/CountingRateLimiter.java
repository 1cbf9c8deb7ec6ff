package dev.ratelimit.spring.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;

/**
 * Counts the calls made to a limiter and remembers the limits of the latest one.
 */
public final class CountingRateLimiter implements RateLimiter {

	private final RateLimiter delegate;

	private final AtomicInteger acquires = new AtomicInteger();

	private final AtomicInteger releases = new AtomicInteger();

	private volatile List<KeyedLimit> lastLimits = List.of();

	public CountingRateLimiter(RateLimiter delegate) {
		this.delegate = delegate;
	}

	@Override
	public Decision acquire(List<KeyedLimit> limits, long cost) {
		this.acquires.incrementAndGet();
		this.lastLimits = new ArrayList<>(limits);
		return this.delegate.acquire(limits, cost);
	}

	@Override
	public List<LimitStatus> inspect(List<KeyedLimit> limits) {
		return this.delegate.inspect(limits);
	}

	@Override
	public void release(Decision decision) {
		if (!decision.leases().isEmpty()) {
			this.releases.incrementAndGet();
		}
		this.delegate.release(decision);
	}

	@Override
	public void reset(KeyedLimit limit) {
		this.delegate.reset(limit);
	}

	public int acquires() {
		return this.acquires.get();
	}

	public int releases() {
		return this.releases.get();
	}

	public List<KeyedLimit> lastLimits() {
		return this.lastLimits;
	}

}
