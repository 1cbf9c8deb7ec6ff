package dev.ratelimit.spring.metrics;

import java.util.Objects;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import dev.ratelimit.core.memory.InMemoryRateLimiter;

/**
 * Binds the meters of the in-memory backend's keys, tagged {@code backend=memory}: the
 * {@value #KEYS} gauge (keys held, bounded by {@code ratelimit.memory.max-keys}) and the
 * {@value #EVICTED} counter, tagged {@code state=fresh} for evicted keys back to their
 * fresh state and {@code state=spent} for keys whose clients got spent permits back.
 */
public class RateLimitKeysMeterBinder implements MeterBinder {

	/** The name of the gauge. */
	public static final String KEYS = "ratelimit.keys";

	/** The name of the eviction counter. */
	public static final String EVICTED = "ratelimit.keys.evicted";

	private final InMemoryRateLimiter limiter;

	/**
	 * Creates the binder.
	 * @param limiter the in-memory limiter
	 */
	public RateLimitKeysMeterBinder(InMemoryRateLimiter limiter) {
		this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder(KEYS, this.limiter, InMemoryRateLimiter::keyCount)
			.description("Keyed limits the in-memory rate-limit backend holds")
			.tag("backend", "memory")
			.register(registry);
		FunctionCounter.builder(EVICTED, this.limiter, InMemoryRateLimiter::evictedFreshKeys)
			.description("Keys the in-memory rate-limit backend evicted to stay within max-keys")
			.tags("backend", "memory", "state", "fresh")
			.register(registry);
		FunctionCounter.builder(EVICTED, this.limiter, InMemoryRateLimiter::evictedSpentKeys)
			.description("Keys the in-memory rate-limit backend evicted to stay within max-keys")
			.tags("backend", "memory", "state", "spent")
			.register(registry);
	}

}
