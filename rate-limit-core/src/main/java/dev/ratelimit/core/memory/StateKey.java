package dev.ratelimit.core.memory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;

/**
 * The key under which the in-memory limiter stores the state of a keyed limit whose
 * client key is at most {@value HashedKey#MAX_PLAIN_CHARS} characters: its policy, client
 * key, name and algorithm, never the limit's other parameters, so that a limit whose rate
 * or capacity changes keeps its state (converted, see {@link Slot}).
 *
 * @param policy the policy name
 * @param key the client key
 * @param name the limit's name within its policy
 * @param algorithm the limit's algorithm
 */
record StateKey(String policy, String key, String name, Algorithm algorithm) {

	/**
	 * Returns the key a keyed limit's state is stored under: a {@link StateKey}, or a
	 * {@link HashedKey} when its client key is longer than
	 * {@value HashedKey#MAX_PLAIN_CHARS} characters.
	 */
	static Object of(KeyedLimit target) {
		return (target.key().length() <= HashedKey.MAX_PLAIN_CHARS)
				? new StateKey(target.policy(), target.key(), target.name(), target.limit().algorithm())
				: HashedKey.of(target);
	}

	// Written out rather than generated: a state key is made, hashed and compared on
	// every decision that misses the recent key.
	@Override
	public boolean equals(Object other) {
		if (this == other) {
			return true;
		}
		return other instanceof StateKey that && this.key.equals(that.key) && this.name.equals(that.name)
				&& this.policy.equals(that.policy) && this.algorithm == that.algorithm;
	}

	@Override
	public int hashCode() {
		return ((31 * this.policy.hashCode() + this.key.hashCode()) * 31 + this.name.hashCode()) * 31
				+ this.algorithm.ordinal();
	}

}
