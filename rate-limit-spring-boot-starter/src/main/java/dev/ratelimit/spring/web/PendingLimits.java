package dev.ratelimit.spring.web;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitService;

/**
 * The policies of the filter rules that apply to a request, with their costs: decided by
 * the filter, or left for the {@code @RateLimited} handler method of the same request to
 * decide together with its own, in one decision. Both web stacks' filters build it.
 *
 * @param policies the filter's policies
 * @param cost the cost the filter computed for its enforced policies: the highest cost of
 * the matched rules that name an enforced policy
 * @param shadowCost the cost the filter computed for its shadow policies: the highest
 * cost of all matched rules, as the request would cost were its shadow policies enforced
 */
public record PendingLimits(List<AppliedPolicy> policies, long cost, long shadowCost) {

	/**
	 * Creates pending limits.
	 * @param policies the filter's policies
	 * @param cost the cost for its enforced policies
	 * @param shadowCost the cost for its shadow policies
	 */
	public PendingLimits {
		policies = List.copyOf(policies);
	}

	/**
	 * Returns the policies of the matched rules that apply to the request (whose
	 * condition, if any, holds; the others charge nothing) and their costs: for the
	 * enforced policies the highest cost of the rules that name one, so that a shadow
	 * rule never changes what the enforced policies are charged; for the shadow policies
	 * the highest cost of all, what the request would cost were they enforced. A rule
	 * whose cost cannot be evaluated for the request refuses it, unless its policies are
	 * all shadow policies, which never refuse a request: they are then not decided for
	 * it.
	 * @param matched the rules whose path and method match the request
	 * @param context the request
	 * @return the policies and costs to decide
	 * @throws RateLimitEvaluationException if the condition or the cost of a rule with an
	 * enforced policy cannot be evaluated
	 */
	public static PendingLimits of(List<FilterRule> matched, RateLimitContext context) {
		Map<String, AppliedPolicy> policies = new LinkedHashMap<>();
		long cost = 0;
		long shadowCost = 0;
		for (FilterRule rule : matched) {
			if (!applies(rule, context)) {
				continue;
			}
			long ruleCost;
			try {
				ruleCost = rule.cost().evaluate(context);
			}
			catch (RuntimeException ex) {
				String names = policyNames(rule);
				RateLimitService.throwUnlessShadow(ex, !rule.enforces(),
						(failure) -> failure.ofCost("the filter for " + names), "the shadow " + names + " of a filter");
				continue;
			}
			rule.policies().forEach((applied) -> policies.putIfAbsent(applied.policy().name(), applied));
			if (rule.enforces()) {
				cost = Math.max(cost, ruleCost);
			}
			shadowCost = Math.max(shadowCost, ruleCost);
		}
		return new PendingLimits(new ArrayList<>(policies.values()), cost, shadowCost);
	}

	/**
	 * Returns these limits with a handler method's: the filter's policies then the
	 * method's, each cost the higher of the two.
	 * @param methodPolicies the method's policies
	 * @param methodCost the method's cost for its enforced policies
	 * @param methodShadowCost the method's cost for its shadow policies
	 * @return the limits of the one decision
	 */
	/**
	 * Returns these limits merged with an annotated handler method's: the filter's
	 * policies then the method's, each cost the higher of the two.
	 * @param methodPolicies the method's policies
	 * @param methodCost the method's cost for its enforced policies
	 * @param methodShadowCost the method's cost for its shadow policies
	 * @return the merged limits
	 */
	public PendingLimits with(List<AppliedPolicy> methodPolicies, long methodCost, long methodShadowCost) {
		List<AppliedPolicy> merged = new ArrayList<>(this.policies);
		merged.addAll(methodPolicies);
		return new PendingLimits(merged, Math.max(this.cost, methodCost), Math.max(this.shadowCost, methodShadowCost));
	}

	/**
	 * Returns whether a matched rule applies to the request: it has no condition, or its
	 * condition holds. A rule of shadow policies only whose condition cannot be evaluated
	 * does not apply.
	 * @throws RateLimitEvaluationException if the condition of a rule with an enforced
	 * policy cannot be evaluated
	 */
	private static boolean applies(FilterRule rule, RateLimitContext context) {
		RateLimitCondition when = rule.when();
		if (when == null) {
			return true;
		}
		try {
			return when.test(context);
		}
		catch (RuntimeException ex) {
			String names = policyNames(rule);
			RateLimitService.throwUnlessShadow(ex, !rule.enforces(),
					(failure) -> failure.ofCondition("the filter for " + names),
					"the shadow " + names + " of a filter");
			return false;
		}
	}

	private static String policyNames(FilterRule rule) {
		List<String> names = rule.policies().stream().map((applied) -> applied.policy().name()).toList();
		return ((names.size() == 1) ? "policy " : "policies ") + String.join(", ", names);
	}

}
