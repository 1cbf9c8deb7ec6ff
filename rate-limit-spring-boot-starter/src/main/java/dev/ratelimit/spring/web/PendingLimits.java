package dev.ratelimit.spring.web;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.spring.AppliedPolicy;

/**
 * Policies that the filter matched but left for the {@code @RateLimited} handler method
 * of the same request to decide, together with its own, in one decision.
 *
 * @param policies the filter's policies
 * @param cost the cost the filter computed for its enforced policies: the highest cost of
 * the matched rules that name an enforced policy
 * @param shadowCost the cost the filter computed for its shadow policies: the highest
 * cost of all matched rules, as the request would cost were its shadow policies enforced
 */
record PendingLimits(List<AppliedPolicy> policies, long cost, long shadowCost) {

	PendingLimits {
		policies = List.copyOf(policies);
	}

	/**
	 * Returns these limits with a handler method's: the filter's policies then the
	 * method's, each cost the higher of the two.
	 * @param methodPolicies the method's policies
	 * @param methodCost the method's cost for its enforced policies
	 * @param methodShadowCost the method's cost for its shadow policies
	 * @return the limits of the one decision
	 */
	PendingLimits with(List<AppliedPolicy> methodPolicies, long methodCost, long methodShadowCost) {
		List<AppliedPolicy> merged = new ArrayList<>(this.policies);
		merged.addAll(methodPolicies);
		return new PendingLimits(merged, Math.max(this.cost, methodCost), Math.max(this.shadowCost, methodShadowCost));
	}

}
