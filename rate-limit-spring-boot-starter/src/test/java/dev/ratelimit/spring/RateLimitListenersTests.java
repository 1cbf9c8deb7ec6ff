package dev.ratelimit.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Listeners are called so that one that throws stops neither the others nor the caller.
 */
class RateLimitListenersTests {

	private static final RateLimitEvent EVENT = new RateLimitEvent(Map.of(), "free", "memory", Duration.ZERO,
			RateLimitResult.unlimited());

	private final List<String> heard = new CopyOnWriteArrayList<>();

	@Test
	void aBackendFailureReachesTheListenersAfterOneThatThrows() {
		RateLimitListeners listeners = new RateLimitListeners(List.of(new Throwing(), new Hearing(this.heard)));
		assertThatNoException().isThrownBy(() -> listeners.backendFailed("redis", new IllegalStateException("down")));
		assertThat(this.heard).containsExactly("listener " + Throwing.class.getName(), "backend redis");
	}

	@Test
	void theOtherListenersHearOfTheFailureButNotTheOneThatFailed() {
		Hearing first = new Hearing(this.heard);
		RateLimitListeners listeners = new RateLimitListeners(List.of(first, new Throwing()));
		listeners.decided(EVENT);
		assertThat(this.heard).containsExactly("decision", "listener " + Throwing.class.getName());
	}

	@Test
	void aListenerThatFailsOnAnotherListenersFailureIsNotReportedInTurn() {
		RateLimitListeners listeners = new RateLimitListeners(List.of(new Throwing(), new Throwing()));
		assertThatNoException().isThrownBy(() -> listeners.decided(EVENT));
	}

	private static final class Throwing implements RateLimitListener {

		@Override
		public void onDecision(RateLimitEvent event) {
			throw new IllegalStateException("decision listener broken");
		}

		@Override
		public void onBackendFailure(String backend, Throwable failure) {
			throw new IllegalStateException("failure listener broken");
		}

		@Override
		public void onListenerFailure(Class<?> listener, Throwable failure) {
			throw new IllegalStateException("failure listener broken");
		}

	}

	private record Hearing(List<String> heard) implements RateLimitListener {

		@Override
		public void onDecision(RateLimitEvent event) {
			this.heard.add("decision");
		}

		@Override
		public void onBackendFailure(String backend, Throwable failure) {
			this.heard.add("backend " + backend);
		}

		@Override
		public void onListenerFailure(Class<?> listener, Throwable failure) {
			this.heard.add("listener " + listener.getName());
		}

	}

}
