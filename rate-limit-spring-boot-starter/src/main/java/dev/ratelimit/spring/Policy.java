package dev.ratelimit.spring;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.KeyedLimit.Counterpart;
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
	 * The lists of limits whose limits, at a position, are the counterparts of the limits
	 * of another list at that position: the tiers' and {@link #limits()}, then those of
	 * the configuration this one {@linkplain #following(Policy) follows}.
	 */
	private final List<List<Limit>> lists;

	/**
	 * Per list of limits of the policy (by identity, as {@link #limitsFor} returns it):
	 * per position, the counterparts of its limit there, computed once.
	 */
	private final Map<List<Limit>, List<List<Counterpart>>> counterparts = new IdentityHashMap<>();

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
		this.lists = List.copyOf(ownLists());
		this.lists.forEach((list) -> this.counterparts.put(list, counterparts(list, this.lists)));
	}

	private Policy(Policy policy, Policy previous) {
		this.name = policy.name;
		this.keyStrategy = policy.keyStrategy;
		this.keyResolver = policy.keyResolver;
		this.shadow = policy.shadow;
		this.limits = policy.limits;
		this.tiers = policy.tiers;
		this.countIf = policy.countIf;
		this.reservesCountIf = policy.reservesCountIf;
		List<List<Limit>> lists = policy.ownLists();
		lists.addAll(previous.ownLists());
		this.lists = List.copyOf(lists);
		policy.ownLists().forEach((list) -> this.counterparts.put(list, counterparts(list, this.lists)));
	}

	/** The tiers' lists of limits, in order, then {@link #limits()}. */
	private List<List<Limit>> ownLists() {
		List<List<Limit>> lists = new ArrayList<>(this.tiers.values());
		lists.add(this.limits);
		return lists;
	}

	/**
	 * Returns this policy, whose limits also take over the spent shares of the limits of
	 * another algorithm at their position in a policy it replaces, such as the same
	 * policy before a reload: a tier whose algorithm changed then keeps what its clients
	 * spent, as a share. Only the policy replaced counts, not the ones before it.
	 * @param previous the policy it replaces, of the same name
	 * @return the policy
	 */
	public Policy following(Policy previous) {
		return new Policy(this, previous);
	}

	/**
	 * Returns, per position of a list of limits, the limits of the other lists at that
	 * position whose spent share the list's limit there takes over: another algorithm,
	 * neither a concurrency limit, and no state of the list's own (a limit of the list
	 * with that name and algorithm), each once.
	 */
	private static List<List<Counterpart>> counterparts(List<Limit> own, List<List<Limit>> lists) {
		List<List<Counterpart>> byPosition = new ArrayList<>(own.size());
		for (int i = 0; i < own.size(); i++) {
			Algorithm algorithm = own.get(i).algorithm();
			List<Counterpart> found = new ArrayList<>(0);
			for (List<Limit> other : lists) {
				if (other == own || i >= other.size() || algorithm == Algorithm.CONCURRENCY) {
					continue;
				}
				Limit limit = other.get(i);
				if (limit.algorithm() == algorithm || limit.algorithm() == Algorithm.CONCURRENCY) {
					continue;
				}
				Counterpart counterpart = new Counterpart(limitName(other, i), limit);
				if (!holdsState(own, counterpart) && !found.contains(counterpart)) {
					found.add(counterpart);
				}
			}
			byPosition.add(List.copyOf(found));
		}
		return byPosition;
	}

	private static boolean holdsState(List<Limit> limits, Counterpart counterpart) {
		for (int j = 0; j < limits.size(); j++) {
			if (limits.get(j).algorithm() == counterpart.limit().algorithm()
					&& limitName(limits, j).equals(counterpart.name())) {
				return true;
			}
		}
		return false;
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
	 * {@link #limitName(List, int)}, without counterparts: the client starts fresh in a
	 * limit of another algorithm (see {@link #keyedLimit(String, List, int)}).
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
	 * Returns the keyed limit of a client for a limit of a list, named by
	 * {@link #limitName(List, int)}, with its counterparts: the limits at the same
	 * position of the policy's other tiers, of its own {@code limits}, and of the policy
	 * it {@linkplain #following(Policy) follows}, that are of another algorithm. A state
	 * of it that holds nothing spent takes over the largest spent share of theirs
	 * (docs/RUNTIME.md, "What carries over").
	 * @param key the client's stored key
	 * @param limits the limits of a tier of this policy, its {@code limits}, or an
	 * override's
	 * @param index the position of the limit in the list
	 * @return the keyed limit
	 */
	public KeyedLimit keyedLimit(String key, List<Limit> limits, int index) {
		List<List<Counterpart>> byPosition = this.counterparts.get(limits);
		if (byPosition == null) {
			// an override's limits
			byPosition = counterparts(limits, this.lists);
		}
		return new KeyedLimit(this.name, key, limitName(limits, index), limits.get(index), byPosition.get(index));
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
