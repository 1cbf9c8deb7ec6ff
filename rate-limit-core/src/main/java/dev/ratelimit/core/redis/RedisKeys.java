package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

import dev.ratelimit.core.KeyedLimit;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * Names the Redis key of a keyed limit: {@code prefix:{policy:HASH}:fingerprint}. The
 * braces are the Redis Cluster hash tag; {@code HASH} is 22 base64url characters of the
 * client key's SHA-256.
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

	/*
	 * The hash tag puts every limit of one policy and client in one slot, decided by one
	 * script call. The client key is never stored: HASH is the first 132 bits of its
	 * SHA-256, so API keys stay secret and braces, newlines, unicode or very long keys
	 * are harmless. A policy name of at most 64 letters, digits, '.', '_' and '-' stays
	 * readable; any other is hashed the same way. The limit's fingerprint keeps
	 * differently configured limits apart, so a changed limit or a caller moving to
	 * another tier starts from fresh state; the old state expires by itself.
	 */
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
	 * A fresh SHA-256 digest: a clone of {@link #SHA_256} where the provider can clone
	 * (looking the algorithm up in the providers on every call cost more than hashing a
	 * key), else a new instance.
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
