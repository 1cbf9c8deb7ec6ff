package dev.ratelimit.core;

import java.util.Objects;

/**
 * A limit applied to one key within one policy: the unit whose state a limiter keeps. Two
 * keyed limits share state only when policy, key and every parameter of the limit are
 * equal, so that a changed limit (or a caller moving to another tier with other limits)
 * starts from fresh state.
 *
 * @param policy the name of the policy the limit belongs to, such as
 * {@code geocode-burst}
 * @param key the client key, such as an API key or an address; any text, hashed by
 * backends that store it
 * @param limit the limit
 */
public record KeyedLimit(String policy, String key, Limit limit) {

	/**
	 * Checks the arguments.
	 * @param policy the policy name
	 * @param key the client key
	 * @param limit the limit
	 */
	public KeyedLimit {
		Objects.requireNonNull(policy, "policy must not be null");
		Objects.requireNonNull(key, "key must not be null");
		Objects.requireNonNull(limit, "limit must not be null");
	}

	// Written out rather than generated: a keyed limit is hashed and compared on every
	// decision.
	@Override
	public boolean equals(Object other) {
		if (this == other) {
			return true;
		}
		return other instanceof KeyedLimit that && this.key.equals(that.key) && this.policy.equals(that.policy)
				&& this.limit.equals(that.limit);
	}

	@Override
	public int hashCode() {
		return (31 * this.policy.hashCode() + this.key.hashCode()) * 31 + this.limit.hashCode();
	}

}
