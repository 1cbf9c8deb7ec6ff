package dev.ratelimit.spring.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.ratelimit.spring.Sleeper;

/**
 * Records the delays it is asked to wait and advances a fake clock by them instead of
 * sleeping.
 */
public final class RecordingSleeper implements Sleeper {

	private final MutableTimeSource clock;

	private final List<Duration> delays = new CopyOnWriteArrayList<>();

	public RecordingSleeper(MutableTimeSource clock) {
		this.clock = clock;
	}

	@Override
	public void sleep(Duration delay) {
		this.delays.add(delay);
		this.clock.advance(delay);
	}

	public List<Duration> delays() {
		return this.delays;
	}

}
