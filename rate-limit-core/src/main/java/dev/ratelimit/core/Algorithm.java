package dev.ratelimit.core;

import java.util.Locale;

/**
 * The algorithms a {@link Limit} can use, with the names used in configuration.
 */
public enum Algorithm {

	/**
	 * Tokens refill continuously up to a capacity; a call takes as many tokens as it
	 * costs.
	 */
	TOKEN_BUCKET("token-bucket"),

	/**
	 * A queue of fixed depth that drains at a constant rate; policing rejects when full,
	 * shaping delays.
	 */
	LEAKY_BUCKET("leaky-bucket"),

	/** A counter per window aligned to the epoch. */
	FIXED_WINDOW("fixed-window"),

	/** Exact: one timestamp per permit over the last window. */
	SLIDING_WINDOW_LOG("sliding-window-log"),

	/** The current window's count plus a weighted share of the previous window's. */
	SLIDING_WINDOW_COUNTER("sliding-window-counter"),

	/** At most a number of calls in flight at once. */
	CONCURRENCY("concurrency");

	private final String configName;

	Algorithm(String configName) {
		this.configName = configName;
	}

	/**
	 * Returns the name of this algorithm in configuration, such as {@code token-bucket}.
	 * @return the configuration name
	 */
	public String configName() {
		return this.configName;
	}

	/**
	 * Returns the algorithm with the given configuration name, ignoring case, dashes and
	 * underscores.
	 * @param name a name such as {@code token-bucket} or {@code TOKEN_BUCKET}
	 * @return the algorithm
	 * @throws InvalidLimitException for {@link Limit.Parameter#ALGORITHM} if no algorithm
	 * has that name
	 */
	public static Algorithm fromConfigName(String name) {
		String wanted = name.trim().toLowerCase(Locale.ROOT).replace('_', '-');
		for (Algorithm algorithm : values()) {
			if (algorithm.configName.equals(wanted)) {
				return algorithm;
			}
		}
		throw new InvalidLimitException(Limit.Parameter.ALGORITHM, name,
				"Unknown algorithm '" + name + "'; expected one of " + names());
	}

	static String names() {
		StringBuilder names = new StringBuilder();
		for (Algorithm algorithm : values()) {
			if (names.length() > 0) {
				names.append(", ");
			}
			names.append(algorithm.configName);
		}
		return names.toString();
	}

	@Override
	public String toString() {
		return this.configName;
	}

}
