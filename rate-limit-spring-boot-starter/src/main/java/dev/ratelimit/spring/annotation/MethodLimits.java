package dev.ratelimit.spring.annotation;

import java.util.List;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitCost;
import dev.ratelimit.spring.RateLimitEvaluationException;

/**
 * The resolved {@link RateLimited} annotations of one method: its policies with their keys, its cost expressions and
 * its parameter names. Built once per method. Immutable.
 */
public final class MethodLimits {

	private final List<AppliedPolicy> policies;

	private final List<RateLimitCost> costs;

	private final String[] parameterNames;

	MethodLimits(List<AppliedPolicy> policies, List<RateLimitCost> costs, String[] parameterNames) {
		this.policies = List.copyOf(policies);
		this.costs = List.copyOf(costs);
		this.parameterNames = parameterNames.clone();
	}

	/**
	 * Returns the policies of the method.
	 * @return the applied policies
	 */
	public List<AppliedPolicy> policies() {
		return this.policies;
	}

	/**
	 * Returns the cost of a call: the highest of the annotations' costs, since a call is charged once.
	 * @param context the call
	 * @return the cost
	 * @throws RateLimitEvaluationException if a cost expression cannot be evaluated for the call, naming the policy
	 * of its annotation
	 */
	public long cost(RateLimitContext context) {
		long cost = 0;
		for (int i = 0; i < this.costs.size(); i++) {
			try {
				cost = Math.max(cost, this.costs.get(i).evaluate(context));
			}
			catch (RateLimitEvaluationException ex) {
				// one cost per annotation, in the order of the policies
				throw (i < this.policies.size()) ? ex.ofCost("policy " + this.policies.get(i).policy().name()) : ex;
			}
		}
		return cost;
	}

	/**
	 * Returns the parameter names of the method.
	 * @return the names, {@code null} where unknown
	 */
	public String[] parameterNames() {
		return this.parameterNames.clone();
	}

	String[] parameterNamesShared() {
		return this.parameterNames;
	}

}
