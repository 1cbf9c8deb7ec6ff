package dev.ratelimit.spring.key;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;

/**
 * Resolves the API key a caller sends in a header, the {@code api-key} strategy. The key
 * is hashed before it becomes a rate-limit key, so that no store ever holds a raw API
 * key: with SHA-256, or, given a secret, with HMAC-SHA-256, so that whoever reads the
 * stored keys cannot test guessed API keys against them without the secret. Callers
 * without one fall back to their address.
 */
public final class ApiKeyResolver implements KeyResolver {

	private static final String HMAC_SHA_256 = "HmacSHA256";

	/** Cloned for each hash, never used itself. */
	private static final MessageDigest SHA_256 = newSha256();

	private final String headerName;

	private final @Nullable SecretKeySpec secret;

	/**
	 * Initialized with the secret and cloned for each hash, never used itself;
	 * {@code null} without a secret.
	 */
	private final @Nullable Mac hmac;

	/**
	 * Creates a resolver that hashes API keys with SHA-256.
	 * @param headerName the header that carries the API key, such as {@code X-API-Key}
	 */
	public ApiKeyResolver(String headerName) {
		this(headerName, null);
	}

	/**
	 * Creates a resolver.
	 * @param headerName the header that carries the API key, such as {@code X-API-Key}
	 * @param secret the secret of HMAC-SHA-256, or {@code null} to hash with SHA-256
	 * @throws IllegalArgumentException if the secret is blank
	 */
	public ApiKeyResolver(String headerName, @Nullable String secret) {
		this.headerName = Objects.requireNonNull(headerName, "headerName must not be null");
		if (secret != null && secret.isBlank()) {
			throw new IllegalArgumentException("the API key secret must not be blank");
		}
		this.secret = (secret != null) ? new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), HMAC_SHA_256)
				: null;
		this.hmac = (this.secret != null) ? newHmac(this.secret) : null;
	}

	@Override
	public @Nullable String resolveKey(RateLimitContext context) {
		RateLimitRequest request = context.request();
		String apiKey = (request != null) ? request.getHeader(this.headerName) : null;
		return (apiKey == null || apiKey.isBlank()) ? null : storedKey(apiKey);
	}

	/**
	 * Returns the rate-limit key of an API key, hashed as this resolver hashes keys:
	 * {@code key:} and the hex SHA-256 or HMAC-SHA-256 of the API key.
	 * @param client the API key
	 * @return the key that the stores hold
	 */
	@Override
	public String storedKey(String client) {
		byte[] apiKey = client.trim().getBytes(StandardCharsets.UTF_8);
		byte[] hash = (this.hmac != null) ? hmac().doFinal(apiKey) : sha256().digest(apiKey);
		return "key:" + HexFormat.of().formatHex(hash);
	}

	/**
	 * Returns the rate-limit key of an API key hashed with SHA-256, as a resolver without
	 * a secret stores it.
	 * @param apiKey the API key
	 * @return {@code key:} and the hex SHA-256 of the API key
	 */
	public static String keyOf(String apiKey) {
		return "key:" + HexFormat.of().formatHex(sha256().digest(apiKey.trim().getBytes(StandardCharsets.UTF_8)));
	}

	/**
	 * A fresh SHA-256 digest: a clone of {@link #SHA_256} where the provider can clone
	 * (looking the algorithm up in the providers took three quarters of the hashing time
	 * of every request), else a new instance.
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

	/**
	 * A fresh HMAC, initialized with the secret: a clone of {@link #hmac}, for the same
	 * reason as {@link #sha256()}.
	 */
	private Mac hmac() {
		try {
			return (Mac) Objects.requireNonNull(this.hmac).clone();
		}
		catch (CloneNotSupportedException ex) {
			return newHmac(Objects.requireNonNull(this.secret));
		}
	}

	private static Mac newHmac(SecretKeySpec secret) {
		try {
			Mac mac = Mac.getInstance(HMAC_SHA_256);
			mac.init(secret);
			return mac;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HMAC-SHA-256 is not available", ex);
		}
	}

	@Override
	public String toString() {
		// never the secret
		return (this.hmac != null) ? "api-key (HMAC-SHA-256)" : "api-key (SHA-256)";
	}

}
