package dev.ratelimit.spring.annotation;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitCost;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitService;

/**
 * The resolved {@link RateLimited} annotations of one method: its policies with their
 * keys, its cost expressions and its parameter names. Built once per method. Immutable.
 */
final class MethodLimits {

	private final List<AppliedPolicy> policies;

	private final List<RateLimitCost> costs;

	private final String[] parameterNames;

	MethodLimits(List<AppliedPolicy> policies, List<RateLimitCost> costs, String[] parameterNames) {
		if (costs.size() != policies.size()) {
			throw new IllegalArgumentException(
					"one cost per policy is needed (" + costs.size() + " costs for " + policies.size() + " policies)");
		}
		this.policies = List.copyOf(policies);
		this.costs = List.copyOf(costs);
		this.parameterNames = parameterNames.clone();
	}

	/**
	 * Returns the policies of the method.
	 * @return the applied policies
	 */
	List<AppliedPolicy> policies() {
		return this.policies;
	}

	/**
	 * Returns what a call is charged, once: the policies of the method; for its enforced
	 * policies the highest cost of the annotations with an enforced policy, so that a
	 * shadow annotation never changes what they are charged; for its shadow policies the
	 * highest cost of all, what the call would cost were they enforced. The policy of an
	 * annotation whose cost cannot be evaluated for the call refuses the call if it is
	 * enforced; a shadow policy, which never refuses a call, is left out instead, not
	 * decided for that call.
	 * @param context the call
	 * @return the policies and the costs
	 * @throws RateLimitEvaluationException if the cost expression of an annotation with
	 * an enforced policy cannot be evaluated for the call, naming the policy
	 */
	Charge charge(RateLimitContext context) {
		// one cost per annotation, in the order of the policies
		List<AppliedPolicy> charged = null;
		long cost = 0;
		long shadowCost = 0;
		for (int i = 0; i < this.costs.size(); i++) {
			AppliedPolicy policy = this.policies.get(i);
			boolean shadow = policy.policy().isShadow();
			long annotationCost;
			try {
				annotationCost = this.costs.get(i).evaluate(context);
			}
			catch (RuntimeException ex) {
				String name = policy.policy().name();
				RateLimitService.throwUnlessShadow(ex, shadow, (failure) -> failure.ofCost("policy " + name),
						"shadow policy '" + name + "'");
				if (charged == null) {
					charged = new ArrayList<>(this.policies.subList(0, i));
				}
				continue;
			}
			if (!shadow) {
				cost = Math.max(cost, annotationCost);
			}
			shadowCost = Math.max(shadowCost, annotationCost);
			if (charged != null) {
				charged.add(policy);
			}
		}
		return new Charge((charged != null) ? charged : this.policies, cost, shadowCost);
	}

	/**
	 * Returns the parameter names of the method.
	 * @return the names, {@code null} where unknown
	 */
	String[] parameterNames() {
		return this.parameterNames.clone();
	}

	String[] parameterNamesShared() {
		return this.parameterNames;
	}

	/**
	 * What a call is charged.
	 *
	 * @param policies the policies that decide the call
	 * @param cost the permits the call takes from the enforced policies
	 * @param shadowCost the permits the call takes from the shadow policies
	 */
	record Charge(List<AppliedPolicy> policies, long cost, long shadowCost) {

	}

}
