package dev.ratelimit.spring.web.reactive;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells BlockHound, when an application's tests install it, that the in-memory backend's
 * back-off is not a blocking call. Two threads that decide the same key at the same
 * instant take turns on a lock held for a few arithmetic operations: the one that waits
 * spins, then yields or parks for the shortest time the OS gives, which BlockHound would
 * otherwise report on an event loop under load. Nothing else is allowed: a limiter that
 * waited on I/O or on another call would still fail. Found by BlockHound's service
 * loader, so it applies only where BlockHound is.
 */
public final class RateLimitBlockHoundIntegration implements BlockHoundIntegration {

	static final String SLOT = "dev.ratelimit.core.memory.Slot";

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.allowBlockingCallsInside(SLOT, "backOff");
		builder.allowBlockingCallsInside(SLOT, "contended");
	}

}
