package dev.ratelimit.spring.annotation;

import java.util.List;

import dev.ratelimit.spring.AppliedPolicy;

/**
 * Policies that a servlet filter matched but left for the {@code @RateLimited} handler method of the same request to
 * decide, together with its own, in one decision.
 *
 * @param policies the filter's policies
 * @param cost the cost the filter computed
 */
public record PendingLimits(List<AppliedPolicy> policies, long cost) {

	/**
	 * Copies the policies.
	 * @param policies the filter's policies
	 * @param cost the cost the filter computed
	 */
	public PendingLimits {
		policies = List.copyOf(policies);
	}

}
