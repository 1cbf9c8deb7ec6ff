package dev.ratelimit.spring.actuate;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the {@code ratelimits} endpoint's overview shows: the backend, what it does when
 * it fails, every policy and every filter rule.
 *
 * @param backend the backend, such as {@code memory} or {@code redis}
 * @param failureMode what happens to calls while the backend fails: {@code allow},
 * {@code deny} or {@code local}
 * @param defaultTier the tier of callers for whom no tier resolves
 * @param policies the policies by name, in configuration order
 * @param filters the filter rules, in order
 * @param configurationApplied when the running configuration was applied: at start-up, or
 * at the last reload that applied a change
 */
public record RateLimitsDescriptor(String backend, String failureMode, String defaultTier,
		Map<String, PolicyDescriptor> policies, List<FilterDescriptor> filters, Instant configurationApplied) {

}
