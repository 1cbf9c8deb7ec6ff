package dev.ratelimit.spring.key;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.TierResolver;

/**
 * Reads the tier from a Spring Security authority {@code TIER_<NAME>} (case-insensitive:
 * {@code TIER_PAID} and {@code tier_paid} both give tier {@code paid}); without one, from
 * a claim of the caller's JWT or OIDC user if a claim is configured; without either, from
 * the request attribute {@link TierResolver#TIER_ATTRIBUTE}. The default tier resolver
 * when Spring Security is present. The tier is read for every call, so a changed
 * authority or claim applies at the caller's next request.
 */
public final class AuthorityTierResolver extends RequestAttributeTierResolver {

	private static final String PREFIX = "tier_";

	/** The class a claim is read through, from spring-security-oauth2-core. */
	private static final String CLAIM_ACCESSOR = "org.springframework.security.oauth2.core.ClaimAccessor";

	private final @Nullable ClaimTierReader claims;

	/**
	 * Creates a resolver that reads authorities and the request attribute.
	 */
	public AuthorityTierResolver() {
		this.claims = null;
	}

	/**
	 * Creates a resolver that also reads the tier from a claim, when the caller has no
	 * {@code TIER_} authority: of a JWT ({@code JwtAuthenticationToken}), an OIDC user,
	 * any principal or credentials that are a {@code ClaimAccessor}, or the attributes of
	 * an OAuth2 user or introspected token. A string claim is the tier; a list claim, its
	 * first element if that is a string; any other value names no tier.
	 * @param tierClaim the claim's name, such as {@code plan}; blank for none
	 * @throws IllegalStateException if a claim is named and spring-security-oauth2-core
	 * is not on the class path
	 */
	public AuthorityTierResolver(@Nullable String tierClaim) {
		if (!StringUtils.hasText(tierClaim)) {
			this.claims = null;
			return;
		}
		if (!ClassUtils.isPresent(CLAIM_ACCESSOR, AuthorityTierResolver.class.getClassLoader())) {
			throw new IllegalStateException("Reading the tier from claim '" + tierClaim
					+ "' needs spring-security-oauth2-core on the class path");
		}
		this.claims = new ClaimTierReader(tierClaim.strip());
	}

	@Override
	public @Nullable String resolveTier(RateLimitContext context) {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication == null && context.request() != null
				&& context.request().getUserPrincipal() instanceof Authentication reactive) {
			// a reactive application keeps its security context in the subscriber's
			// context, which its request carries
			authentication = reactive;
		}
		if (authentication != null && authentication.isAuthenticated()) {
			for (GrantedAuthority granted : authentication.getAuthorities()) {
				String authority = granted.getAuthority();
				if (authority != null && authority.length() > PREFIX.length() && hasPrefix(authority)) {
					return authority.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
				}
			}
			String claimed = (this.claims != null) ? this.claims.tierOf(authentication) : null;
			if (StringUtils.hasText(claimed)) {
				return claimed;
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
