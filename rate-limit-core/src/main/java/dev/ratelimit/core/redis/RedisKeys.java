package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

import dev.ratelimit.core.KeyedLimit;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * Names the Redis key of a keyed limit: {@code prefix:{policy:HASH}:fingerprint}.
 *
 * <p>
 * The part in braces is the Redis Cluster hash tag, so that every limit of one policy and client lives in one slot
 * and is decided by one script call. The client key is never stored: {@code HASH} is the first 132 bits of its
 * SHA-256 in base64url (22 characters), so API keys stay secret and braces, newlines, unicode or very long keys are
 * harmless. A policy name made only of letters, digits, {@code .}, {@code _} and {@code -} (at most 64 of them) is
 * kept readable; any other is hashed the same way. The limit's {@link dev.ratelimit.core.Limit#fingerprint()
 * fingerprint} keeps differently configured limits apart, so a changed limit or a caller moving to another tier starts
 * from fresh state at its next call; the old state expires by itself.
 */
final class RedisKeys {

	private static final int HASH_CHARS = 22;

	/** Cloned for each hash, never used itself. */
	private static final MessageDigest SHA_256 = newSha256();

	private static final int MAX_READABLE_POLICY = 64;

	private final String prefix;

	RedisKeys(String prefix) {
		this.prefix = prefix;
	}

	static String checkPrefix(String prefix) {
		return RedisSetting.checkKeyPrefix(prefix);
	}

	String key(KeyedLimit target) {
		return this.prefix + ":{" + policy(target.policy()) + ":" + hash(target.key()) + "}:"
				+ target.limit().fingerprint();
	}

	static int slot(String key) {
		return ClusterSlotHashUtil.calculateSlot(key);
	}

	private static String policy(String policy) {
		if (policy.isEmpty() || policy.length() > MAX_READABLE_POLICY) {
			return "~" + hash(policy);
		}
		for (int i = 0; i < policy.length(); i++) {
			char c = policy.charAt(i);
			boolean readable = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
					|| c == '_' || c == '-';
			if (!readable) {
				return "~" + hash(policy);
			}
		}
		return policy;
	}

	static String hash(String text) {
		byte[] digest = sha256().digest(text.getBytes(StandardCharsets.UTF_8));
		return Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, HASH_CHARS);
	}

	/**
	 * A fresh SHA-256 digest: a clone of {@link #SHA_256} where the provider can clone (looking the algorithm up in
	 * the providers on every call cost more than hashing a key), else a new instance.
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
			throw new IllegalStateException("SHA-256 is required by every Java runtime", ex);
		}
	}

}
