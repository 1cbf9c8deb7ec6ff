package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * Names the Redis key of a keyed limit: {@code prefix:{policy:HASH}:name:layout}. The
 * braces are the Redis Cluster hash tag; {@code HASH} is 22 base64url characters of the
 * client key's SHA-256; {@code layout} names the algorithm's state layout. The penalty of
 * a policy and client key is {@code prefix:{policy:HASH}:penalty}, in the same slot.
 */
final class RedisKeys {

	private static final int HASH_CHARS = 22;

	/** Cloned for each hash, never used itself. */
	private static final MessageDigest SHA_256 = newSha256();

	private static final int MAX_READABLE_NAME = 64;

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
	 * are harmless; it is taken over bytes that tell every string apart, unpaired
	 * surrogates included (see bytes). A policy name of at most 64 letters, digits, '.',
	 * '_' and '-' stays readable; any other is hashed the same way, and so is the limit's
	 * name. The key holds no parameter of the limit: a limit that keeps its name and
	 * algorithm keeps its key when its rate or capacity changes, and the script converts
	 * its state (the state records the parameters it was written under). The algorithm's
	 * layout is in the key, so that a changed algorithm starts from fresh state and never
	 * reads a key of another layout; the old key expires by itself.
	 */
	String key(KeyedLimit target) {
		return this.prefix + ":{" + readable(target.policy()) + ":" + hash(target.key()) + "}:"
				+ readable(target.name()) + ":" + layout(target.limit().algorithm());
	}

	/**
	 * Returns the key of the penalty of a keyed limit's policy and client key: in the
	 * slot of every limit of that policy and client key, and never the key of a limit,
	 * whose name ends with its layout.
	 * @param target the keyed limit
	 * @return the penalty key
	 */
	String penaltyKey(KeyedLimit target) {
		return this.prefix + ":{" + readable(target.policy()) + ":" + hash(target.key()) + "}:penalty";
	}

	/**
	 * Returns the key that holds until when the spent shares a keyed limit took over from
	 * its counterparts count ({@code carried_shares.lua}): its state key with
	 * {@code :carried}, in the same slot, and never the key of a limit, whose name ends
	 * with its layout.
	 * @param target the keyed limit
	 * @return the key
	 */
	String carriedKey(KeyedLimit target) {
		return key(target) + ":carried";
	}

	/**
	 * Returns the name of an algorithm's state layout in keys. Should a layout change,
	 * its name changes too (as the sliding log's did, to {@code swl2}, when its members
	 * gained running totals), so that old and new instances use different keys during a
	 * rolling deploy.
	 * @param algorithm the algorithm
	 * @return the layout's name
	 */
	static String layout(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET -> "tb";
			case LEAKY_BUCKET -> "lb";
			case FIXED_WINDOW -> "fw";
			case SLIDING_WINDOW_LOG -> "swl2";
			case SLIDING_WINDOW_COUNTER -> "swc";
			case CONCURRENCY -> "cc";
		};
	}

	/**
	 * Returns the {@code SCAN MATCH} pattern of every key this names, and of no key of a
	 * limiter with another prefix (one that starts with this one included).
	 */
	String pattern() {
		StringBuilder pattern = new StringBuilder(this.prefix.length() + 4);
		for (int i = 0; i < this.prefix.length(); i++) {
			char c = this.prefix.charAt(i);
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				pattern.append('\\');
			}
			pattern.append(c);
		}
		return pattern.append(":{*").toString();
	}

	static int slot(String key) {
		return ClusterSlotHashUtil.calculateSlot(key);
	}

	private static String readable(String name) {
		if (name.isEmpty() || name.length() > MAX_READABLE_NAME) {
			return "~" + hash(name);
		}
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			boolean readable = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
					|| c == '_' || c == '-';
			if (!readable) {
				return "~" + hash(name);
			}
		}
		return name;
	}

	static String hash(String text) {
		byte[] digest = sha256().digest(bytes(text));
		return Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, HASH_CHARS);
	}

	/**
	 * Returns the bytes a text is hashed over: its UTF-8, and for an unpaired surrogate,
	 * which UTF-8 would replace with {@code '?'}, the three bytes of its code unit
	 * (generalized UTF-8, as WTF-8 encodes it). No well-formed text encodes to those
	 * bytes, so two different strings never share a hash input, and a text without
	 * surrogates keeps the hash, and so the Redis key, it always had.
	 * @param text the text
	 * @return the bytes to hash
	 */
	static byte[] bytes(String text) {
		int length = text.length();
		int i = 0;
		while (i < length && !Character.isSurrogate(text.charAt(i))) {
			i++;
		}
		if (i == length) {
			return text.getBytes(StandardCharsets.UTF_8);
		}
		byte[] bytes = new byte[3 * length];
		int n = 0;
		for (i = 0; i < length; i++) {
			char c = text.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1))) {
				int codePoint = Character.toCodePoint(c, text.charAt(++i));
				bytes[n++] = (byte) (0xF0 | (codePoint >> 18));
				bytes[n++] = (byte) (0x80 | ((codePoint >> 12) & 0x3F));
				bytes[n++] = (byte) (0x80 | ((codePoint >> 6) & 0x3F));
				bytes[n++] = (byte) (0x80 | (codePoint & 0x3F));
			}
			else if (c < 0x80) {
				bytes[n++] = (byte) c;
			}
			else if (c < 0x800) {
				bytes[n++] = (byte) (0xC0 | (c >> 6));
				bytes[n++] = (byte) (0x80 | (c & 0x3F));
			}
			else {
				// the rest of the BMP; an unpaired surrogate as its code unit, 0xED
				// 0xA0-0xBF
				// 0x80-0xBF, which UTF-8 never produces
				bytes[n++] = (byte) (0xE0 | (c >> 12));
				bytes[n++] = (byte) (0x80 | ((c >> 6) & 0x3F));
				bytes[n++] = (byte) (0x80 | (c & 0x3F));
			}
		}
		return Arrays.copyOf(bytes, n);
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
