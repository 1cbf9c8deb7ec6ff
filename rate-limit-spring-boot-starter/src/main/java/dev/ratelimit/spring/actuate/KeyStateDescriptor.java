package dev.ratelimit.spring.actuate;

import java.util.List;

/**
 * The state of one client's limits within a policy, as the {@code ratelimits} endpoint
 * shows it.
 *
 * @param policy the policy name
 * @param tier the tier whose limits are shown
 * @param limits the state of each limit, in configuration order
 */
public record KeyStateDescriptor(String policy, String tier, List<LimitStateDescriptor> limits) {

	/**
	 * The state of one limit for one client, read without consuming anything.
	 *
	 * @param algorithm the algorithm, such as {@code token-bucket}
	 * @param limit the most permits the limit grants at once
	 * @param remaining the permits the client has left now
	 * @param resetSeconds the seconds until the limit is full again, rounded up as in
	 * {@code X-RateLimit-Reset}; while the client serves a penalty, the seconds the
	 * penalty has left
	 * @param penalized whether the client serves a penalty in this limit's policy (the
	 * endpoint's delete lifts it)
	 */
	public record LimitStateDescriptor(String algorithm, long limit, long remaining, long resetSeconds,
			boolean penalized) {

	}

}
