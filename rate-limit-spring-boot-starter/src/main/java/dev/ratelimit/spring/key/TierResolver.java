package dev.ratelimit.spring.key;

import dev.ratelimit.spring.RateLimitContext;

import org.jspecify.annotations.Nullable;

/**
 * Resolves the tier of a caller, such as {@code free} or {@code paid}, which selects a policy's limits. A bean of this
 * type replaces the default one. Tiers are case-insensitive.
 */
@FunctionalInterface
public interface TierResolver {

	/**
	 * The request attribute that an application may set (for example in its own filter) to the caller's tier.
	 */
	String TIER_ATTRIBUTE = TierResolver.class.getName() + ".tier";

	/**
	 * Returns the tier of a call.
	 * @param context the call
	 * @return the tier, or {@code null} when none resolves, in which case {@code ratelimit.default-tier} applies
	 */
	@Nullable String resolveTier(RateLimitContext context);

}
