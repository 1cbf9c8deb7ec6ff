package dev.ratelimit.spring;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.KeyedLimit;

/**
 * What an allowed call owes its {@code count-if} policies, settled once its response is
 * known: the limits of each such policy, with the condition under which they are charged
 * and whether the call reserved their cost, the cost, and the call the conditions read.
 * Settled at most once.
 */
final class ResponseCharge {

	private final List<Counted> policies;

	private final long cost;

	private final RateLimitContext context;

	private final AtomicBoolean settled = new AtomicBoolean();

	ResponseCharge(List<Counted> policies, long cost, RateLimitContext context) {
		this.policies = List.copyOf(policies);
		this.cost = cost;
		this.context = context;
	}

	List<Counted> policies() {
		return this.policies;
	}

	long cost() {
		return this.cost;
	}

	RateLimitContext context() {
		return this.context;
	}

	/**
	 * Marks the charge settled.
	 * @return whether it was not settled before
	 */
	boolean settle() {
		return this.settled.compareAndSet(false, true);
	}

	/**
	 * The limits of one {@code count-if} policy for a call's key.
	 *
	 * @param policy the policy name
	 * @param condition when the call is charged
	 * @param limits the keyed limits
	 * @param reserved whether the call took the cost from them before it ran, to be given
	 * back when the condition is false; else it only checked them, and they are charged
	 * when it is true
	 */
	record Counted(String policy, RateLimitCondition condition, List<KeyedLimit> limits, boolean reserved) {

		Counted {
			limits = List.copyOf(limits);
		}

	}

}
