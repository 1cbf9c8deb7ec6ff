package dev.ratelimit.core.internal.algorithm;

import java.util.ArrayList;
import java.util.List;

/**
 * The state of a concurrency limit: the leases held, each with its expiry, in the order
 * they were taken.
 */
final class LeaseState {

	final List<Entry> leases = new ArrayList<>();

	LeaseState() {
	}

	/**
	 * Returns the number of leases held, some of which may have expired.
	 * @return the leases
	 */
	int size() {
		return this.leases.size();
	}

	record Entry(String id, long expiresAt, long cost) {
	}

}
