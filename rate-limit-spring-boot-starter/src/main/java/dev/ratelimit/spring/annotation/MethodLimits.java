package dev.ratelimit.spring.annotation;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitCost;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitService;

/**
 * The resolved {@link RateLimited} annotations of one method: its policies with their
 * keys, its cost expressions, its conditions and its parameter names. Built once per
 * method. Immutable.
 */
final class MethodLimits {

	private final List<AppliedPolicy> policies;

	private final List<RateLimitCost> costs;

	private final @Nullable RateLimitCondition[] conditions;

	private final boolean conditional;

	private final String[] parameterNames;

	MethodLimits(List<AppliedPolicy> policies, List<RateLimitCost> costs, String[] parameterNames) {
		this(policies, costs, new RateLimitCondition[policies.size()], parameterNames);
	}

	/**
	 * Creates the limits.
	 * @param policies the policy of each annotation
	 * @param costs the cost of each annotation
	 * @param conditions the condition of each annotation, {@code null} where it applies
	 * to every call
	 * @param parameterNames the parameter names of the method
	 */
	MethodLimits(List<AppliedPolicy> policies, List<RateLimitCost> costs, @Nullable RateLimitCondition[] conditions,
			String[] parameterNames) {
		if (costs.size() != policies.size() || conditions.length != policies.size()) {
			throw new IllegalArgumentException("one cost and one condition per policy are needed (" + costs.size()
					+ " costs and " + conditions.length + " conditions for " + policies.size() + " policies)");
		}
		this.policies = List.copyOf(policies);
		this.costs = List.copyOf(costs);
		this.conditions = conditions.clone();
		boolean conditional = false;
		for (RateLimitCondition condition : this.conditions) {
			conditional |= condition != null;
		}
		this.conditional = conditional;
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
	 * decided for that call. An annotation whose condition ({@code when}) is false for
	 * the call is left out alike, and so is a shadow one whose condition cannot be
	 * evaluated.
	 * @param context the call
	 * @return the policies and the costs
	 * @throws RateLimitEvaluationException if the condition or the cost expression of an
	 * annotation with an enforced policy cannot be evaluated for the call, naming the
	 * policy
	 */
	Charge charge(RateLimitContext context) {
		// one cost per annotation, in the order of the policies
		List<AppliedPolicy> charged = null;
		long cost = 0;
		long shadowCost = 0;
		for (int i = 0; i < this.costs.size(); i++) {
			AppliedPolicy policy = this.policies.get(i);
			boolean shadow = policy.policy().isShadow();
			if (this.conditional && !applies(i, policy, context)) {
				if (charged == null) {
					charged = new ArrayList<>(this.policies.subList(0, i));
				}
				continue;
			}
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
	 * Returns whether an annotation applies to a call: it has no condition, or its
	 * condition holds. A shadow policy's annotation whose condition cannot be evaluated
	 * does not apply.
	 * @throws RateLimitEvaluationException if the condition of an annotation with an
	 * enforced policy cannot be evaluated for the call, naming the policy
	 */
	private boolean applies(int annotation, AppliedPolicy policy, RateLimitContext context) {
		RateLimitCondition condition = this.conditions[annotation];
		if (condition == null) {
			return true;
		}
		try {
			return condition.test(context);
		}
		catch (RuntimeException ex) {
			String name = policy.policy().name();
			RateLimitService.throwUnlessShadow(ex, policy.policy().isShadow(),
					(failure) -> failure.ofCondition("policy " + name), "shadow policy '" + name + "'");
			return false;
		}
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
