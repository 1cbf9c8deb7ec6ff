package dev.ratelimit.spring.actuate;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.Rate;

import org.jspecify.annotations.Nullable;

/**
 * A configured limit, as the {@code ratelimits} endpoint describes it.
 *
 * @param algorithm the algorithm, such as {@code token-bucket}
 * @param rate the rate, such as {@code 5/1s}, or {@code null} for a concurrency limit
 * @param limit the most permits the limit grants at once (a bucket's capacity, a window's
 * permits, the calls in flight of a concurrency limit)
 * @param description the limit as it would be configured, such as
 * {@code token-bucket 5/1s capacity=10}
 */
public record LimitDescriptor(String algorithm, @Nullable String rate, long limit, String description) {

	static LimitDescriptor of(Limit limit) {
		Rate rate = limit.rate();
		return new LimitDescriptor(limit.algorithm().configName(), (rate != null) ? rate.toString() : null,
				limit.capacity(), limit.toString());
	}

}
