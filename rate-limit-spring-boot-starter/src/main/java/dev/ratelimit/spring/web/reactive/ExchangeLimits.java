package dev.ratelimit.spring.web.reactive;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.web.PendingLimits;

/**
 * The rate-limit state of one exchange, kept in an exchange attribute by the
 * {@link RateLimitWebFilter}: the policies left for a reactive handler method (and those
 * its interceptor took), the results whose permits are given back when the exchange
 * completes, those charged once the response is known ({@code count-if}), and the latest
 * result, which a 429 describes. An exchange moves between threads, one at a time; the
 * methods are synchronized for the memory effects, never contended.
 */
final class ExchangeLimits {

	static final String ATTRIBUTE = ExchangeLimits.class.getName();

	private final List<RateLimitResult> held = new ArrayList<>(1);

	private final List<RateLimitResult> charges = new ArrayList<>(0);

	private @Nullable PendingLimits pending;

	private @Nullable PendingLimits taken;

	private @Nullable RateLimitResult latest;

	private boolean completed;

	static @Nullable ExchangeLimits of(ServerWebExchange exchange) {
		return (exchange.getAttribute(ATTRIBUTE) instanceof ExchangeLimits limits) ? limits : null;
	}

	synchronized void defer(PendingLimits pending) {
		this.pending = pending;
	}

	synchronized @Nullable PendingLimits takePending() {
		PendingLimits pending = this.pending;
		this.pending = null;
		return pending;
	}

	synchronized void takeForHandler() {
		this.taken = this.pending;
		this.pending = null;
	}

	synchronized @Nullable PendingLimits taken() {
		PendingLimits taken = this.taken;
		this.taken = null;
		return taken;
	}

	synchronized void restoreTaken() {
		if (this.taken != null) {
			this.pending = this.taken;
			this.taken = null;
		}
	}

	/**
	 * Records a result; returns whether its permits are held until the exchange completes
	 * (not once it has: the caller then gives them back itself).
	 */
	synchronized boolean decided(RateLimitResult result) {
		this.latest = result;
		if (this.completed) {
			return false;
		}
		this.held.add(result);
		return true;
	}

	synchronized boolean holdCharge(RateLimitResult result) {
		if (this.completed) {
			return false;
		}
		this.charges.add(result);
		return true;
	}

	synchronized @Nullable RateLimitResult latest() {
		return this.latest;
	}

	/**
	 * Ends the exchange: returns the results to release, and no later result is held.
	 */
	synchronized List<RateLimitResult> complete() {
		this.completed = true;
		List<RateLimitResult> held = List.copyOf(this.held);
		this.held.clear();
		return held;
	}

	synchronized List<RateLimitResult> takeCharges() {
		List<RateLimitResult> charges = List.copyOf(this.charges);
		this.charges.clear();
		return charges;
	}

}
