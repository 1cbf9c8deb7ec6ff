package dev.ratelimit.spring;

import org.jspecify.annotations.Nullable;

/**
 * Resolves the client key of a call: the identity whose permits a policy counts. A bean
 * of this type can be named by a policy as {@code key: bean:NAME}.
 */
@FunctionalInterface
public interface KeyResolver {

	/**
	 * Returns the key of a call.
	 * @param context the call
	 * @return the key, or {@code null} (or blank) when this resolver has none for the
	 * call, in which case the client address is used
	 */
	@Nullable String resolveKey(RateLimitContext context);

	/**
	 * Returns the key this resolver resolves for a client that it identifies by the given
	 * text: the text as this strategy reads it from a call (the raw API key, the
	 * principal's name, the address), turned into the key the limiter stores, so that an
	 * operator can name a client (as the {@code ratelimits} endpoint does) without
	 * knowing how keys are stored. Text starting with {@code ip:} names a client address,
	 * the fallback of most strategies.
	 * @param client the client as this strategy identifies it
	 * @return the stored key; by default the text itself
	 */
	default String storedKey(String client) {
		return client;
	}

}
