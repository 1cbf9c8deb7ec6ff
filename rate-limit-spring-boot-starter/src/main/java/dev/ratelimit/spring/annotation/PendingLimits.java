package dev.ratelimit.spring.annotation;

import java.util.List;

import dev.ratelimit.spring.AppliedPolicy;

/**
 * Policies that a servlet filter matched but left for the {@code @RateLimited} handler
 * method of the same request to decide, together with its own, in one decision.
 *
 * @param policies the filter's policies
 * @param cost the cost the filter computed for its enforced policies: the highest cost of
 * the matched rules that name an enforced policy
 * @param shadowCost the cost the filter computed for its shadow policies: the highest
 * cost of all matched rules, as the request would cost were its shadow policies enforced
 */
public record PendingLimits(List<AppliedPolicy> policies, long cost, long shadowCost) {

	/**
	 * Copies the policies.
	 * @param policies the filter's policies
	 * @param cost the cost of the enforced policies
	 * @param shadowCost the cost of the shadow policies
	 */
	public PendingLimits {
		policies = List.copyOf(policies);
	}

	/**
	 * Creates pending limits whose enforced and shadow policies cost the same.
	 * @param policies the filter's policies
	 * @param cost the cost of every policy
	 */
	public PendingLimits(List<AppliedPolicy> policies, long cost) {
		this(policies, cost, cost);
	}

}
