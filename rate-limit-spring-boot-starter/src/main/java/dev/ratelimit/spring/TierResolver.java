package dev.ratelimit.spring;

import org.jspecify.annotations.Nullable;

/**
 * Resolves the tier of a caller, such as {@code free} or {@code paid}, which selects a
 * policy's limits. A bean of this type replaces the default one. Tiers are
 * case-insensitive.
 */
@FunctionalInterface
public interface TierResolver {

	/**
	 * The request attribute that an application may set (for example in its own filter)
	 * to the caller's tier. Its name keeps the package this interface had before, so that
	 * filters that set it by name keep working.
	 */
	String TIER_ATTRIBUTE = "dev.ratelimit.spring.key.TierResolver.tier";

	/**
	 * Returns the tier of a call.
	 * @param context the call
	 * @return the tier, or {@code null} when none resolves, in which case
	 * {@code ratelimit.default-tier} applies
	 */
	@Nullable String resolveTier(RateLimitContext context);

}
