package dev.ratelimit.spring.key;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitContext;

/**
 * Resolves the API key a caller sends in a header, the {@code api-key} strategy. The key is hashed with SHA-256
 * before it becomes a rate-limit key, so that no store ever holds a raw API key. Callers without one fall back to
 * their address.
 */
public final class ApiKeyResolver implements KeyResolver {

	/** Cloned for each hash, never used itself. */
	private static final MessageDigest SHA_256 = newSha256();

	private final String headerName;

	/**
	 * Creates a resolver.
	 * @param headerName the header that carries the API key, such as {@code X-API-Key}
	 */
	public ApiKeyResolver(String headerName) {
		this.headerName = Objects.requireNonNull(headerName, "headerName must not be null");
	}

	@Override
	public @Nullable String resolveKey(RateLimitContext context) {
		HttpServletRequest request = context.request();
		String apiKey = (request != null) ? request.getHeader(this.headerName) : null;
		return (apiKey == null || apiKey.isBlank()) ? null : keyOf(apiKey);
	}

	@Override
	public String storedKey(String client) {
		return keyOf(client);
	}

	/**
	 * Returns the rate-limit key of an API key: {@code key:} and the hex SHA-256 of the API key.
	 * @param apiKey the API key
	 * @return the key that the stores hold
	 */
	public static String keyOf(String apiKey) {
		return "key:" + hash(apiKey.trim());
	}

	private static String hash(String apiKey) {
		return HexFormat.of().formatHex(sha256().digest(apiKey.getBytes(StandardCharsets.UTF_8)));
	}

	/**
	 * A fresh SHA-256 digest: a clone of {@link #SHA_256} where the provider can clone (looking the algorithm up in
	 * the providers took three quarters of the hashing time of every request), else a new instance.
	 */
	private static MessageDigest sha256() {
		try {
			return (MessageDigest) SHA_256.clone();
		}
		catch (CloneNotSupportedException ex) {
			return newSha256();
		}
	}

	private static MessageDigest newSha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

}
