package dev.ratelimit.spring.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.ratelimit.spring.RateLimitEvent;
import dev.ratelimit.spring.RateLimitListener;

/**
 * Records every decision event.
 */
public final class RecordingListener implements RateLimitListener {

	private final List<RateLimitEvent> events = new CopyOnWriteArrayList<>();

	@Override
	public void onDecision(RateLimitEvent event) {
		this.events.add(event);
	}

	public List<RateLimitEvent> events() {
		return this.events;
	}

	public RateLimitEvent last() {
		return this.events.get(this.events.size() - 1);
	}

}
