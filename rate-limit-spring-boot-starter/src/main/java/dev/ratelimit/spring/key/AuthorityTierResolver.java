package dev.ratelimit.spring.key;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;

import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.TierResolver;

/**
 * Reads the tier from a Spring Security authority {@code TIER_<NAME>} (case-insensitive:
 * {@code TIER_PAID} and {@code tier_paid} both give tier {@code paid}); without one, from
 * the request attribute {@link TierResolver#TIER_ATTRIBUTE}. The default tier resolver
 * when Spring Security is present. The tier is read for every call, so a changed
 * authority applies at the caller's next request.
 */
public final class AuthorityTierResolver extends RequestAttributeTierResolver {

	private static final String PREFIX = "tier_";

	@Override
	public @Nullable String resolveTier(RateLimitContext context) {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication != null && authentication.isAuthenticated()) {
			for (GrantedAuthority granted : authentication.getAuthorities()) {
				String authority = granted.getAuthority();
				if (authority != null && authority.length() > PREFIX.length() && hasPrefix(authority)) {
					return authority.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
				}
			}
		}
		return super.resolveTier(context);
	}

	/**
	 * Returns whether an authority starts with {@code tier_} in any case, read on every
	 * call without copying it. Only ASCII letters fold: no other character lower-cases to
	 * one of {@code tier_}.
	 */
	private static boolean hasPrefix(String authority) {
		for (int i = 0; i < PREFIX.length(); i++) {
			char c = authority.charAt(i);
			char lower = (c >= 'A' && c <= 'Z') ? (char) (c + ('a' - 'A')) : c;
			if (lower != PREFIX.charAt(i)) {
				return false;
			}
		}
		return true;
	}

}
