package dev.ratelimit.spring;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * The configured policies by name, and the tier of callers for whom no tier resolves.
 * Immutable.
 */
public final class PolicyRegistry {

	private final Map<String, Policy> policies;

	private final String defaultTier;

	private final boolean countsByResponse;

	/**
	 * Creates a registry.
	 * @param policies the policies
	 * @param defaultTier the tier of callers for whom no tier resolves
	 */
	public PolicyRegistry(Collection<Policy> policies, String defaultTier) {
		Map<String, Policy> byName = new LinkedHashMap<>();
		for (Policy policy : policies) {
			byName.put(policy.name(), policy);
		}
		this.policies = Collections.unmodifiableMap(byName);
		this.defaultTier = normalizeTier(defaultTier);
		this.countsByResponse = byName.values().stream().anyMatch((policy) -> policy.countIf() != null);
	}

	/**
	 * Returns whether a policy counts requests by their response ({@code count-if}), so
	 * that a request's response must be settled once it is final.
	 * @return whether any policy has {@code count-if}
	 */
	public boolean countsByResponse() {
		return this.countsByResponse;
	}

	/**
	 * Returns a tier name in the form used for look-ups: trimmed and lower case, since
	 * tiers are case-insensitive.
	 * @param tier the tier name
	 * @return the normalized name
	 */
	public static String normalizeTier(String tier) {
		return tier.trim().toLowerCase(Locale.ROOT);
	}

	/**
	 * Returns the policy with the given name.
	 * @param name the policy name
	 * @return the policy, or {@code null} if none has that name
	 */
	public @Nullable Policy find(String name) {
		return this.policies.get(name);
	}

	/**
	 * Returns the policy with the given name.
	 * @param name the policy name
	 * @return the policy
	 * @throws IllegalArgumentException if no policy has that name
	 */
	public Policy get(String name) {
		Policy policy = this.policies.get(name);
		if (policy == null) {
			throw new IllegalArgumentException("No rate-limit policy named '" + name + "'; known: " + names());
		}
		return policy;
	}

	/**
	 * Returns every policy, in configuration order.
	 * @return the policies
	 */
	public Collection<Policy> policies() {
		return this.policies.values();
	}

	/**
	 * Returns the policy names, in configuration order.
	 * @return the names
	 */
	public Set<String> names() {
		return this.policies.keySet();
	}

	/**
	 * Returns every tier that some policy defines limits for.
	 * @return the tier names, sorted
	 */
	public Set<String> tiers() {
		Set<String> tiers = new TreeSet<>();
		this.policies.values().forEach((policy) -> tiers.addAll(policy.tiers().keySet()));
		return tiers;
	}

	/**
	 * Returns every tier the policies know: those that some policy defines limits for,
	 * and the default tier.
	 * @return the tier names, sorted
	 */
	public Set<String> knownTiers() {
		Set<String> tiers = tiers();
		tiers.add(this.defaultTier);
		return tiers;
	}

	/**
	 * Returns this registry, whose policies also take over the spent shares of the limits
	 * of another algorithm at their position in the same-named policies of the registry
	 * it replaces ({@link Policy#following(Policy)}).
	 * @param previous the registry it replaces
	 * @return the registry
	 */
	public PolicyRegistry following(PolicyRegistry previous) {
		List<Policy> following = new ArrayList<>(this.policies.size());
		for (Policy policy : this.policies.values()) {
			Policy replaced = previous.find(policy.name());
			following.add((replaced != null) ? policy.following(replaced) : policy);
		}
		return new PolicyRegistry(following, this.defaultTier);
	}

	/**
	 * Returns the tier of callers for whom no tier resolves.
	 * @return the lower-case default tier
	 */
	public String defaultTier() {
		return this.defaultTier;
	}

}
