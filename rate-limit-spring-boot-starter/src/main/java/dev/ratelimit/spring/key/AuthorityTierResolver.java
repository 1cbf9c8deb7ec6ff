package dev.ratelimit.spring.key;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;

import dev.ratelimit.spring.RateLimitContext;

/**
 * Reads the tier from a Spring Security authority {@code TIER_<NAME>} (case-insensitive: {@code TIER_PAID} and
 * {@code tier_paid} both give tier {@code paid}); without one, from the request attribute
 * {@link TierResolver#TIER_ATTRIBUTE}. The default tier resolver when Spring Security is present. The tier is read
 * for every call, so a changed authority applies at the caller's next request.
 */
public final class AuthorityTierResolver extends RequestAttributeTierResolver {

	private static final String PREFIX = "tier_";

	@Override
	public @Nullable String resolveTier(RateLimitContext context) {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication != null && authentication.isAuthenticated()) {
			for (GrantedAuthority granted : authentication.getAuthorities()) {
				String authority = granted.getAuthority();
				if (authority != null && authority.length() > PREFIX.length()
						&& authority.substring(0, PREFIX.length()).toLowerCase(Locale.ROOT).equals(PREFIX)) {
					return authority.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
				}
			}
		}
		return super.resolveTier(context);
	}

}
