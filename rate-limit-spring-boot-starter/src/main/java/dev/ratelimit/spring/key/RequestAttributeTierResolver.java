package dev.ratelimit.spring.key;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.TierResolver;

/**
 * Reads the tier from the request attribute {@link TierResolver#TIER_ATTRIBUTE}, which an
 * application's own filter may set. The default tier resolver when Spring Security is
 * absent.
 */
public class RequestAttributeTierResolver implements TierResolver {

	@Override
	public @Nullable String resolveTier(RateLimitContext context) {
		RateLimitRequest request = context.request();
		Object tier = (request != null) ? request.getAttribute(TIER_ATTRIBUTE) : null;
		return (tier != null) ? tier.toString() : null;
	}

}
