package dev.ratelimit.spring.overrides;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

import dev.ratelimit.core.Limit;
import org.jspecify.annotations.Nullable;

/**
 * The limits one client gets in one policy instead of its tier's, until an optional
 * expiry.
 *
 * @param policy the policy name
 * @param client the client as its policy stores it: the key a decision uses (an API key
 * hashed as for a decision), never a raw API key
 * @param limits the limits, decided as a tier's limits are; empty for a client that the
 * policy does not limit
 * @param expires when the override ends, or {@code null} for never
 */
public record LimitOverride(String policy, String client, List<Limit> limits, @Nullable Instant expires) {

	/**
	 * Checks and copies the arguments.
	 * @param policy the policy name
	 * @param client the stored client key
	 * @param limits the limits
	 * @param expires when the override ends, or {@code null}
	 */
	public LimitOverride {
		Objects.requireNonNull(policy, "policy must not be null");
		Objects.requireNonNull(client, "client must not be null");
		limits = List.copyOf(limits);
	}

	/**
	 * Returns whether the override has ended at the given instant.
	 * @param now the instant
	 * @return whether it has expired
	 */
	public boolean isExpiredAt(Instant now) {
		return this.expires != null && !now.isBefore(this.expires);
	}

}
