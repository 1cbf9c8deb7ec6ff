package dev.ratelimit.spring;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.KeyedLimit;

/**
 * What an allowed call owes its {@code count-if} policies, charged once its response is
 * known: the limits of each such policy, with the condition under which they are charged,
 * the cost, and the call the conditions read. Charged at most once.
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
	 */
	record Counted(String policy, RateLimitCondition condition, List<KeyedLimit> limits) {

		Counted {
			limits = List.copyOf(limits);
		}

	}

}
