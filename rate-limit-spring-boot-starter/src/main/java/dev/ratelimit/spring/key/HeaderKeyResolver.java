package dev.ratelimit.spring.key;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;

/**
 * Resolves the value of a request header, the {@code header:NAME} strategy. The value is
 * used as it is; use {@code api-key} for secrets, which are hashed.
 */
public final class HeaderKeyResolver implements KeyResolver {

	private static final String PREFIX = "header:";

	private final String headerName;

	/**
	 * Creates a resolver.
	 * @param headerName the header name
	 */
	public HeaderKeyResolver(String headerName) {
		this.headerName = Objects.requireNonNull(headerName, "headerName must not be null");
	}

	@Override
	public @Nullable String resolveKey(RateLimitContext context) {
		RateLimitRequest request = context.request();
		String value = (request != null) ? request.getHeader(this.headerName) : null;
		return (value == null || value.isBlank()) ? null : storedKey(value);
	}

	/**
	 * Returns the key of a header value: prefixed, so that no value can name another
	 * strategy's key (such as the {@code ip:} key of a caller without the header).
	 */
	@Override
	public String storedKey(String client) {
		return PREFIX + client;
	}

}
