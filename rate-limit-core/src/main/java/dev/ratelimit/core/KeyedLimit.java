package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A limit applied to one key within one policy: the unit whose state a limiter keeps.
 *
 * <p>
 * A limiter keeps state per policy, client key, {@linkplain #name() name} and algorithm,
 * never per parameter: when a limit keeps its name and algorithm but changes its rate or
 * capacity (a reloaded configuration, a client moved to another tier), the client's spent
 * permits carry over to the new limit ("spent stays spent"); a changed algorithm starts
 * from fresh state, unless it names that state among its {@linkplain #carryFrom()
 * counterparts}: a state of this limit that holds nothing spent of its own then takes
 * over the largest spent share of theirs (docs/RUNTIME.md, "What carries over"). Equality
 * is that of a value: two keyed limits are equal when all five components are, limit
 * parameters included.
 *
 * @param policy the name of the policy the limit belongs to, such as
 * {@code geocode-burst}
 * @param key the client key, such as an API key or an address; any text, hashed by
 * backends that store it
 * @param name the name of the limit within its policy, stable across versions of the
 * configuration, such as {@code token-bucket} or {@code token-bucket-2}
 * @param limit the limit
 * @param carryFrom the limits of the same policy and client key, each of another
 * algorithm, whose spent share this limit takes over where it holds nothing spent of its
 * own, such as the limits at the same position of the policy's other tiers; empty for
 * none (neither a concurrency limit nor the limits it names carry a share)
 */
public record KeyedLimit(String policy, String key, String name, Limit limit, List<Counterpart> carryFrom) {

	/**
	 * Checks the arguments.
	 * @param policy the policy name
	 * @param key the client key
	 * @param name the name of the limit within its policy, not empty
	 * @param limit the limit
	 * @param carryFrom the counterparts, each of another algorithm than {@code limit},
	 * none a concurrency limit, and none if {@code limit} is one
	 */
	public KeyedLimit {
		Objects.requireNonNull(policy, "policy must not be null");
		Objects.requireNonNull(key, "key must not be null");
		Objects.requireNonNull(name, "name must not be null");
		Objects.requireNonNull(limit, "limit must not be null");
		if (name.isEmpty()) {
			throw new IllegalArgumentException("name of a limit of policy '" + policy + "' must not be empty");
		}
		carryFrom = List.copyOf(Objects.requireNonNull(carryFrom, "carryFrom must not be null"));
		for (int i = 0; i < carryFrom.size(); i++) {
			Counterpart counterpart = carryFrom.get(i);
			Algorithm algorithm = counterpart.limit().algorithm();
			if (algorithm == limit.algorithm() || algorithm == Algorithm.CONCURRENCY
					|| limit.algorithm() == Algorithm.CONCURRENCY) {
				throw new IllegalArgumentException("Limit '" + name + "' of policy '" + policy
						+ "' cannot carry the spent share of '" + counterpart.name() + "' (" + counterpart.limit()
						+ "): a counterpart has another algorithm than the limit, and neither is a concurrency limit");
			}
		}
	}

	/**
	 * Creates a keyed limit without counterparts.
	 * @param policy the policy name
	 * @param key the client key
	 * @param name the name of the limit within its policy, not empty
	 * @param limit the limit
	 */
	public KeyedLimit(String policy, String key, String name, Limit limit) {
		this(policy, key, name, limit, List.of());
	}

	/**
	 * Creates a keyed limit named after its algorithm, such as {@code token-bucket}: the
	 * name of a policy's only limit of that algorithm.
	 * @param policy the policy name
	 * @param key the client key
	 * @param limit the limit
	 */
	public KeyedLimit(String policy, String key, Limit limit) {
		this(policy, key, Objects.requireNonNull(limit, "limit must not be null").algorithm().configName(), limit);
	}

	/**
	 * Returns the keyed limits of this limit's counterparts: each of {@link #carryFrom()}
	 * with this limit's policy and client key.
	 * @return the counterparts' keyed limits, in order
	 */
	public List<KeyedLimit> counterparts() {
		List<KeyedLimit> counterparts = new ArrayList<>(this.carryFrom.size());
		for (Counterpart counterpart : this.carryFrom) {
			counterparts.add(new KeyedLimit(this.policy, this.key, counterpart.name(), counterpart.limit()));
		}
		return counterparts;
	}

	/**
	 * Returns whether this keyed limit and another share state in a limiter: same policy,
	 * client key, name and algorithm, whatever their other parameters.
	 * @param other the other keyed limit
	 * @return whether they share state
	 */
	public boolean sharesStateWith(KeyedLimit other) {
		return this.key.equals(other.key) && this.name.equals(other.name) && this.policy.equals(other.policy)
				&& this.limit.algorithm() == other.limit.algorithm();
	}

	/**
	 * Checks that the limits of one call give each name of a policy and client key one
	 * limit only: a limiter could not tell which of two limits with one name its state
	 * belongs to. Equal keyed limits given twice are allowed (they are decided once).
	 * @param limits the limits of one call
	 * @throws IllegalArgumentException naming the policy and the name, if two limits
	 * share them with different parameters
	 */
	public static void requireOneLimitPerName(List<KeyedLimit> limits) {
		for (int i = 1; i < limits.size(); i++) {
			KeyedLimit later = limits.get(i);
			for (int j = 0; j < i; j++) {
				KeyedLimit earlier = limits.get(j);
				if (earlier.name.equals(later.name) && earlier.key.equals(later.key)
						&& earlier.policy.equals(later.policy) && !earlier.limit.equals(later.limit)) {
					throw new IllegalArgumentException(
							"Policy '" + later.policy + "' has two limits named '" + later.name + "' in one call ("
									+ earlier.limit + " and " + later.limit + "); give each limit its own name");
				}
			}
		}
	}

	// Written out rather than generated: a keyed limit is hashed and compared on every
	// decision.
	@Override
	public boolean equals(Object other) {
		if (this == other) {
			return true;
		}
		return other instanceof KeyedLimit that && this.key.equals(that.key) && this.policy.equals(that.policy)
				&& this.name.equals(that.name) && this.limit.equals(that.limit)
				&& this.carryFrom.equals(that.carryFrom);
	}

	// The counterparts are left out: equal keyed limits still hash alike.
	@Override
	public int hashCode() {
		return ((31 * this.policy.hashCode() + this.key.hashCode()) * 31 + this.name.hashCode()) * 31
				+ this.limit.hashCode();
	}

	@Override
	public String toString() {
		return "KeyedLimit[policy=" + this.policy + ", key=" + this.key + ", name=" + this.name + ", limit="
				+ this.limit + (this.carryFrom.isEmpty() ? "" : ", carryFrom=" + this.carryFrom) + "]";
	}

	/**
	 * A limit of the same policy and client key as a keyed limit, of another algorithm,
	 * whose spent share that keyed limit takes over where it holds nothing spent of its
	 * own: the limit at the same position of another tier, for one.
	 *
	 * @param name the counterpart's name within the policy, such as {@code fixed-window}
	 * @param limit the counterpart's limit
	 */
	public record Counterpart(String name, Limit limit) {

		/**
		 * Checks the arguments.
		 * @param name the name, not empty
		 * @param limit the limit
		 */
		public Counterpart {
			Objects.requireNonNull(name, "name must not be null");
			Objects.requireNonNull(limit, "limit must not be null");
			if (name.isEmpty()) {
				throw new IllegalArgumentException("name of a counterpart must not be empty");
			}
		}

	}

}
