package dev.ratelimit.peers;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The tier of each API key: a fixed map, the same for every variant. A key it does not
 * list, or none, is of the free tier.
 */
public final class ApiKeyTiers {

	/** The header that carries the caller's API key. */
	public static final String HEADER = "X-API-Key";

	/** The tier of a key that the map does not list. */
	public static final String DEFAULT_TIER = "free";

	private static final Map<String, String> TIERS = Map.of("demo-free", "free", "demo-paid", "paid");

	/**
	 * Returns the tier of an API key.
	 * @param apiKey the key, or {@code null} if the request has none
	 * @return {@code free} or {@code paid}
	 */
	public String tierOf(@Nullable String apiKey) {
		return (apiKey != null) ? TIERS.getOrDefault(apiKey, DEFAULT_TIER) : DEFAULT_TIER;
	}

}
