package dev.ratelimit.spring;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;

/**
 * A named policy: how to key a caller, the limits for each tier, whether it only observes
 * (shadow), and whether it counts only the calls whose response meets a condition
 * ({@code count-if}). Immutable.
 */
public final class Policy {

	private final String name;

	private final String keyStrategy;

	private final KeyResolver keyResolver;

	private final boolean shadow;

	private final List<Limit> limits;

	private final Map<String, List<Limit>> tiers;

	private final @Nullable RateLimitCondition countIf;

	private final boolean reservesCountIf;

	/**
	 * Creates a policy.
	 * @param name the name, such as {@code geocode-burst}
	 * @param keyStrategy the key strategy as configured, such as {@code api-key}
	 * @param keyResolver the resolver for that strategy
	 * @param shadow whether the policy only observes and never rejects
	 * @param limits the limits of callers whose tier has no limits of its own
	 * @param tiers the limits of each tier, by lower-case tier name; without
	 * {@code limits}, those of the default tier also apply to callers of a tier not
	 * listed
	 */
	public Policy(String name, String keyStrategy, KeyResolver keyResolver, boolean shadow, List<Limit> limits,
			Map<String, List<Limit>> tiers) {
		this(name, keyStrategy, keyResolver, shadow, limits, tiers, null);
	}

	/**
	 * Creates a policy that may count by the response.
	 * @param name the name, such as {@code login-failures}
	 * @param keyStrategy the key strategy as configured, such as {@code api-key}
	 * @param keyResolver the resolver for that strategy
	 * @param shadow whether the policy only observes and never rejects
	 * @param limits the limits of callers whose tier has no limits of its own
	 * @param tiers the limits of each tier, by lower-case tier name; without
	 * {@code limits}, those of the default tier also apply to callers of a tier not
	 * listed
	 * @param countIf the condition over the response under which a call is charged after
	 * it, or {@code null} to charge every call before it as usual
	 */
	public Policy(String name, String keyStrategy, KeyResolver keyResolver, boolean shadow, List<Limit> limits,
			Map<String, List<Limit>> tiers, @Nullable RateLimitCondition countIf) {
		this(name, keyStrategy, keyResolver, shadow, limits, tiers, countIf, true);
	}

	/**
	 * Creates a policy that may count by the response, in either mode.
	 * @param name the name, such as {@code login-failures}
	 * @param keyStrategy the key strategy as configured, such as {@code api-key}
	 * @param keyResolver the resolver for that strategy
	 * @param shadow whether the policy only observes and never rejects
	 * @param limits the limits of callers whose tier has no limits of its own
	 * @param tiers the limits of each tier, by lower-case tier name; without
	 * {@code limits}, those of the default tier also apply to callers of a tier not
	 * listed
	 * @param countIf the condition over the response under which a call is charged after
	 * it, or {@code null} to charge every call before it as usual
	 * @param reservesCountIf with a condition: whether a call's cost is taken before it
	 * and given back when the condition is false ({@code count-if-mode: reserve}), rather
	 * than checked before it and taken when the condition is true
	 * ({@code check-then-charge})
	 */
	public Policy(String name, String keyStrategy, KeyResolver keyResolver, boolean shadow, List<Limit> limits,
			Map<String, List<Limit>> tiers, @Nullable RateLimitCondition countIf, boolean reservesCountIf) {
		this.name = Objects.requireNonNull(name, "name must not be null");
		this.keyStrategy = Objects.requireNonNull(keyStrategy, "keyStrategy must not be null");
		this.keyResolver = Objects.requireNonNull(keyResolver, "keyResolver must not be null");
		this.shadow = shadow;
		this.limits = List.copyOf(limits);
		Map<String, List<Limit>> copy = new LinkedHashMap<>();
		tiers.forEach((tier, tierLimits) -> copy.put(tier, List.copyOf(tierLimits)));
		this.tiers = java.util.Collections.unmodifiableMap(copy);
		this.countIf = countIf;
		this.reservesCountIf = reservesCountIf;
	}

	/**
	 * Returns the policy name.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the key strategy as configured.
	 * @return the key strategy
	 */
	public String keyStrategy() {
		return this.keyStrategy;
	}

	/**
	 * Returns the key expression of the policy, parsed again, for checks at start-up.
	 * @return the expression, or {@code null} if the key strategy is not SpEL
	 * {@code #{...}}
	 */
	public @Nullable RateLimitExpression keyExpression() {
		String key = this.keyStrategy.trim();
		return RateLimitExpression.isExpression(key) ? RateLimitExpression.parse(key) : null;
	}

	/**
	 * Returns the resolver of the caller's key.
	 * @return the key resolver
	 */
	public KeyResolver keyResolver() {
		return this.keyResolver;
	}

	/**
	 * Returns whether the policy only observes: it is decided and recorded but never
	 * rejects.
	 * @return whether the policy is a shadow policy
	 */
	public boolean isShadow() {
		return this.shadow;
	}

	/**
	 * Returns the condition over the response under which a call is charged
	 * ({@code count-if}): a call is then rejected before it runs only when fewer permits
	 * are left than its cost, and charged after its response only when the condition
	 * holds.
	 * @return the condition, or {@code null} for a policy that charges every call before
	 * it runs
	 */
	public @Nullable RateLimitCondition countIf() {
		return this.countIf;
	}

	/**
	 * Returns whether a call's cost is reserved before it and given back when the
	 * {@link #countIf() condition} is false, rather than checked before it and charged
	 * when the condition is true.
	 * @return whether the {@code count-if} cost is reserved; meaningless without a
	 * condition
	 */
	public boolean reservesCountIf() {
		return this.reservesCountIf;
	}

	/**
	 * Returns the limits that apply to every tier without limits of its own.
	 * @return the limits
	 */
	public List<Limit> limits() {
		return this.limits;
	}

	/**
	 * Returns the limits of each tier that has its own.
	 * @return the limits by lower-case tier name
	 */
	public Map<String, List<Limit>> tiers() {
		return this.tiers;
	}

	/**
	 * Returns the limits for a tier: the tier's own if the policy lists the tier, else
	 * {@link #limits()}, else (a policy with tiers only) those of the default tier, so
	 * that a caller of a tier the policy does not list, such as one that a token names,
	 * is never unlimited by it. Only a tier listed with no limits is unlimited.
	 * @param tier the lower-case tier name
	 * @param defaultTier the lower-case tier of callers for whom no tier resolves
	 * ({@code ratelimit.default-tier})
	 * @return the limits
	 */
	public List<Limit> limitsFor(String tier, String defaultTier) {
		List<Limit> own = this.tiers.get(tier);
		if (own != null) {
			return own;
		}
		return this.limits.isEmpty() ? this.tiers.getOrDefault(defaultTier, this.limits) : this.limits;
	}

	/**
	 * Returns the name that identifies a limit of a list within its policy across
	 * configuration versions, tiers and overrides: its algorithm, such as
	 * {@code token-bucket}, followed by {@code -2}, {@code -3} for the second and third
	 * limit of that algorithm in the list. A client's state follows the name, so that a
	 * changed rate or capacity keeps what the client spent.
	 * @param limits the limits of a tier or an override
	 * @param index the position of the limit in the list
	 * @return the name
	 */
	public static String limitName(List<Limit> limits, int index) {
		Limit limit = limits.get(index);
		int same = 0;
		for (int i = 0; i < index; i++) {
			if (limits.get(i).algorithm() == limit.algorithm()) {
				same++;
			}
		}
		String name = limit.algorithm().configName();
		return (same == 0) ? name : name + "-" + (same + 1);
	}

	/**
	 * Returns the keyed limit of a client for a limit of a list, named by
	 * {@link #limitName(List, int)}.
	 * @param policy the policy name
	 * @param key the client's stored key
	 * @param limits the limits of a tier or an override
	 * @param index the position of the limit in the list
	 * @return the keyed limit
	 */
	public static KeyedLimit keyedLimit(String policy, String key, List<Limit> limits, int index) {
		return new KeyedLimit(policy, key, limitName(limits, index), limits.get(index));
	}

	/**
	 * Returns the policy's penalty, which every limit of the policy carries alike: how
	 * long a client is refused once the policy rejects it.
	 * @return the penalty in microseconds, 0 for none
	 */
	public long penaltyMicros() {
		long penalty = 0;
		for (Limit limit : this.limits) {
			penalty = Math.max(penalty, limit.penaltyMicros());
		}
		for (List<Limit> tierLimits : this.tiers.values()) {
			for (Limit limit : tierLimits) {
				penalty = Math.max(penalty, limit.penaltyMicros());
			}
		}
		return penalty;
	}

	@Override
	public String toString() {
		return "Policy[" + this.name + ", key=" + this.keyStrategy + (this.shadow ? ", shadow" : "")
				+ ((this.countIf != null) ? ", count-if=" + this.countIf : "") + ", limits=" + this.limits + ", tiers="
				+ this.tiers + "]";
	}

}
