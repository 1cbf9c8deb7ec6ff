package dev.ratelimit.core.memory;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;

/**
 * The key under which the in-memory limiter stores the state of a keyed limit whose
 * client key is longer than {@value #MAX_PLAIN_CHARS} characters: as {@link StateKey},
 * with the SHA-256 of the client key in its place, so a long key costs a few dozen bytes.
 *
 * @param policy the policy name
 * @param name the limit's name within its policy
 * @param algorithm the limit's algorithm
 * @param digest0 bytes 0 to 7 of the digest
 * @param digest1 bytes 8 to 15
 * @param digest2 bytes 16 to 23
 * @param digest3 bytes 24 to 31
 */
record HashedKey(String policy, String name, Algorithm algorithm, long digest0, long digest1, long digest2,
		long digest3) {

	/**
	 * Client keys up to this long are stored as they are, which keeps the look-up of
	 * ordinary keys as it was; among them the API-key resolver's ({@code key:} and 64 hex
	 * digits, 68 characters), already a digest, which a second SHA-256 would only slow.
	 */
	static final int MAX_PLAIN_CHARS = 72;

	// Two keys share state only if their digests collide, which SHA-256 makes practically
	// impossible. The digest is
	// taken over the key's UTF-16 code units, two bytes each, so two different strings
	// never give the same input
	// (UTF-8 would map every unpaired surrogate to the same replacement).
	static HashedKey of(KeyedLimit target) {
		String key = target.key();
		ByteBuffer units = ByteBuffer.allocate(2 * key.length());
		units.asCharBuffer().put(key);
		ByteBuffer digest = ByteBuffer.wrap(sha256().digest(units.array()));
		return new HashedKey(target.policy(), target.name(), target.limit().algorithm(), digest.getLong(),
				digest.getLong(), digest.getLong(), digest.getLong());
	}

	private static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			// Every Java platform must provide SHA-256 (MessageDigest's javadoc).
			throw new IllegalStateException(ex);
		}
	}

}
