package dev.ratelimit.spring;

import java.time.Duration;
import java.util.Map;

/**
 * One decision of the {@link RateLimitService}, as seen by a {@link RateLimitListener}.
 * Never carries a client key.
 *
 * @param outcomes the outcome for each policy of the call, by policy name, in the order
 * the policies applied
 * @param tier the tier of the caller
 * @param backend the name of the backend that decided, such as {@code memory} or
 * {@code redis}
 * @param duration how long the backend took to decide; zero when no limit applied to the
 * call, so that the backend was not asked
 * @param result the result
 */
public record RateLimitEvent(Map<String, RateLimitOutcome> outcomes, String tier, String backend, Duration duration,
		RateLimitResult result) {

}
