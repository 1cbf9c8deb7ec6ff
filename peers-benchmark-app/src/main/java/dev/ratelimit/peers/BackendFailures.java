package dev.ratelimit.peers;

import java.util.concurrent.atomic.LongAdder;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.RateLimitEvent;
import dev.ratelimit.spring.RateLimitListener;

/**
 * Counts the Redis calls of our starter that failed (timed out on a loaded machine, say)
 * and were decided by its failure policy instead, and shows the count at
 * {@code GET /peers/backend-failures}: {@code run.sh} reports them, since they make a
 * Redis variant look faster than it is. In place of the actuator's metric, which would
 * put Micrometer's request observations on every variant.
 */
@RestController
class BackendFailures implements RateLimitListener {

	private final LongAdder failures = new LongAdder();

	@Override
	public void onDecision(RateLimitEvent event) {
	}

	@Override
	public void onBackendFailure(String backend, Throwable failure) {
		this.failures.increment();
	}

	@GetMapping("/peers/backend-failures")
	long count() {
		return this.failures.sum();
	}

}
