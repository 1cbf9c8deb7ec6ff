package dev.ratelimit.core;

import java.util.Objects;

/**
 * A concurrency permit held by an allowed call, given back with
 * {@link RateLimiter#release(Decision)}.
 *
 * @param target the concurrency limit the permit belongs to
 * @param id the identity of the permit within that limit's state
 * @param cost how many permits the call holds
 */
public record Lease(KeyedLimit target, String id, long cost) {

	/**
	 * Checks the arguments.
	 * @param target the keyed limit
	 * @param id the lease id
	 * @param cost the permits held
	 */
	public Lease {
		Objects.requireNonNull(target, "target must not be null");
		Objects.requireNonNull(id, "id must not be null");
	}

}
