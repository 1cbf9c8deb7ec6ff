package dev.ratelimit.spring.testsupport;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.TimeSource;

/**
 * A clock that moves only when a test moves it.
 */
public final class MutableTimeSource implements TimeSource {

	private final AtomicLong now = new AtomicLong(1_700_000_000_000_000L);

	@Override
	public long nowMicros() {
		return this.now.get();
	}

	public void advance(Duration duration) {
		this.now.addAndGet(duration.toNanos() / 1000);
	}

}
