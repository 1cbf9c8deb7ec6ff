package dev.ratelimit.spring.metrics;

import java.util.Objects;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import dev.ratelimit.core.memory.InMemoryRateLimiter;

/**
 * Binds the {@value #KEYS} gauge, tagged {@code backend=memory}: the keyed limits the in-memory backend holds (as
 * Caffeine estimates them), which {@code ratelimit.memory.max-keys} bounds.
 */
public class RateLimitKeysMeterBinder implements MeterBinder {

	/** The name of the gauge. */
	public static final String KEYS = "ratelimit.keys";

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
	}

}
