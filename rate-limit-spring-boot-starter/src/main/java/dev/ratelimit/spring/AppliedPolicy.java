package dev.ratelimit.spring;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A policy as applied to a call by a filter or an annotation, possibly with a key of its
 * own that overrides the policy's key.
 *
 * @param policy the policy
 * @param keyOverride the resolver that replaces the policy's key resolver, or
 * {@code null}
 */
public record AppliedPolicy(Policy policy, @Nullable KeyResolver keyOverride) {

	/**
	 * Checks the arguments.
	 * @param policy the policy
	 * @param keyOverride the key override
	 */
	public AppliedPolicy {
		Objects.requireNonNull(policy, "policy must not be null");
	}

	/**
	 * Returns a policy applied with its own key.
	 * @param policy the policy
	 * @return the applied policy
	 */
	public static AppliedPolicy of(Policy policy) {
		return new AppliedPolicy(policy, null);
	}

	/**
	 * Returns the resolver of the key for this application of the policy.
	 * @return the override if there is one, else the policy's resolver
	 */
	public KeyResolver keyResolver() {
		return (this.keyOverride != null) ? this.keyOverride : this.policy.keyResolver();
	}

}
