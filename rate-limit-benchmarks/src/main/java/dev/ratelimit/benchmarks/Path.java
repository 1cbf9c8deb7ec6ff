package dev.ratelimit.benchmarks;

import java.time.Duration;

import io.github.bucket4j.Bandwidth;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;

import dev.ratelimit.core.Limit;

/**
 * The two paths a benchmark measures, as one refill rate given to every library:
 * {@link #ALLOWED} refills far faster than any thread can call, so that nearly every call
 * passes; {@link #REJECTED} refills 1000 per second, so that after the first second
 * nearly every call is turned away. Each library gets the same rate and burst (a bucket
 * of one second's refill), built the way its documentation shows.
 */
enum Path {

	/** A billion permits per second: every call passes. */
	ALLOWED(1_000_000_000L),

	/** A thousand permits per second: all but a few calls per million are rejected. */
	REJECTED(1_000L);

	final long perSecond;

	Path(long perSecond) {
		this.perSecond = perSecond;
	}

	static Path of(String name) {
		return valueOf(name.toUpperCase(java.util.Locale.ROOT));
	}

	/**
	 * Ours: a token bucket refilling {@code perSecond} per second up to the same
	 * capacity.
	 */
	Limit limit() {
		return Limit.tokenBucket(this.perSecond + "/1s", this.perSecond);
	}

	/** Bucket4j: the same bucket, refilled greedily (continuously), as ours is. */
	Bandwidth bandwidth() {
		return Bandwidth.builder().capacity(this.perSecond).refillGreedy(this.perSecond, Duration.ofSeconds(1)).build();
	}

	/**
	 * Resilience4j: {@code perSecond} permits per one-second cycle, no waiting for a
	 * permit.
	 */
	RateLimiterConfig resilience4j() {
		return RateLimiterConfig.custom()
			.limitForPeriod(Math.toIntExact(this.perSecond))
			.limitRefreshPeriod(Duration.ofSeconds(1))
			.timeoutDuration(Duration.ZERO)
			.build();
	}

	/**
	 * Guava: a smooth bursty limiter of {@code perSecond} permits per second (its burst
	 * is one second's worth).
	 */
	com.google.common.util.concurrent.RateLimiter guava() {
		return com.google.common.util.concurrent.RateLimiter.create(this.perSecond);
	}

}
