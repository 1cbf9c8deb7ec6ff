package dev.ratelimit.spring.key;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;

/**
 * Resolves the authenticated principal's name, the {@code principal} key strategy: Spring
 * Security's authentication when it is present, else the request's user principal
 * ({@code HttpServletRequest#getUserPrincipal()}). Anonymous callers have no key here and
 * fall back to their address.
 */
public final class PrincipalKeyResolver implements KeyResolver {

	@Override
	public @Nullable String resolveKey(RateLimitContext context) {
		Principal principal = context.principal();
		return (principal != null && principal.getName() != null) ? storedKey(principal.getName()) : null;
	}

	@Override
	public String storedKey(String client) {
		return "user:" + client;
	}

}
