package dev.ratelimit.spring.key;

import java.util.Collection;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.security.core.Authentication;
import org.springframework.security.oauth2.core.ClaimAccessor;
import org.springframework.security.oauth2.core.OAuth2AuthenticatedPrincipal;

/**
 * Reads a caller's tier from a claim of its authentication: of a JWT (the principal and
 * the credentials of a {@code JwtAuthenticationToken}), of an OIDC user, or of any other
 * {@link ClaimAccessor}; else from an attribute of an OAuth2 user or introspected token.
 * The only class of the starter that names a class of spring-security-oauth2-core, and
 * only loaded when a claim is configured.
 */
final class ClaimTierReader {

	private static final Log logger = LogFactory.getLog(ClaimTierReader.class);

	private final String claim;

	/** Whether a claim of a type that names no tier was logged: once is enough. */
	private final AtomicBoolean reportedIgnored = new AtomicBoolean();

	ClaimTierReader(String claim) {
		this.claim = claim;
	}

	/**
	 * Returns the tier the claim names: a string claim; the first element of a list
	 * claim, if it is a string. Any other value names none.
	 * @param authentication an authenticated caller
	 * @return the tier, or {@code null}
	 */
	@Nullable String tierOf(Authentication authentication) {
		Object value = claimOf(authentication.getPrincipal());
		if (value == null) {
			value = claimOf(authentication.getCredentials());
		}
		if (value == null) {
			return null;
		}
		if (value instanceof String tier) {
			return tier;
		}
		if (value instanceof Collection<?> list) {
			if (list.isEmpty()) {
				return null;
			}
			value = list.iterator().next();
			if (value instanceof String first) {
				return first;
			}
		}
		if (logger.isDebugEnabled() && this.reportedIgnored.compareAndSet(false, true)) {
			logger.debug("Claim '" + this.claim + "' holds a " + value.getClass().getName()
					+ ", not a string or a list that starts with one: it names no tier, so the default tier applies"
					+ " (logged once)");
		}
		return null;
	}

	private @Nullable Object claimOf(@Nullable Object holder) {
		if (holder instanceof ClaimAccessor accessor) {
			Map<String, Object> claims = accessor.getClaims();
			return (claims != null) ? claims.get(this.claim) : null;
		}
		if (holder instanceof OAuth2AuthenticatedPrincipal principal) {
			Map<String, Object> attributes = principal.getAttributes();
			return (attributes != null) ? attributes.get(this.claim) : null;
		}
		return null;
	}

}
