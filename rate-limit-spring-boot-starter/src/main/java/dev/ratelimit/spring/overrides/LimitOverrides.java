package dev.ratelimit.spring.overrides;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Where per-client overrides live. The starter keeps them in memory, or in Redis with the
 * Redis backend; a bean of this type, such as one backed by the application's database,
 * replaces either. The starter caches a user bean's answers (bounded in size and time),
 * so {@link #find} need not be fast; the built-in stores answer from memory.
 * <p>
 * Clients are named as their policy stores them ({@link LimitOverride#client()}). An
 * expired override may still be returned: callers ignore it.
 */
public interface LimitOverrides {

	/**
	 * Returns the override of one client in one policy.
	 * @param policy the policy name
	 * @param client the stored client key
	 * @return the override, or {@code null} if there is none
	 */
	@Nullable LimitOverride find(String policy, String client);

	/**
	 * Returns every override.
	 * @return the overrides
	 */
	List<LimitOverride> list();

	/**
	 * Sets the override of a client in a policy, replacing any it had.
	 * @param override the override
	 */
	void put(LimitOverride override);

	/**
	 * Removes the override of a client in a policy.
	 * @param policy the policy name
	 * @param client the stored client key
	 * @return whether there was one
	 */
	boolean remove(String policy, String client);

	/**
	 * Returns whether some client of the policy may have an override, so that a decision
	 * can skip the look-up when none has. By default {@code true}.
	 * @param policy the policy name
	 * @return {@code false} only if no client of the policy has an override
	 */
	default boolean mayOverride(String policy) {
		return true;
	}

}
