package dev.ratelimit.core.redis.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import org.awaitility.core.ConditionTimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * Waits for test servers to reach a state, polling every 50 ms; an exception while
 * polling counts as "not yet".
 */
final class Polling {

	private Polling() {
	}

	/**
	 * Returns once the condition holds.
	 * @throws IllegalStateException naming what was awaited, if it does not hold within
	 * the timeout
	 */
	static void until(String what, Duration timeout, BooleanSupplier condition) {
		try {
			await().atMost(timeout)
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(50))
				.ignoreExceptions()
				.until(condition::getAsBoolean);
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException("Waited " + timeout + " for " + what + " in vain", ex);
		}
	}

}
