package dev.ratelimit.spring.reactive;

import java.time.Duration;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Installs BlockHound once for the reactive tests' JVM (they run in a fork of their own,
 * see the starter's pom), so that any blocking call on an event loop or a non-blocking
 * Reactor thread fails the test that made it.
 */
final class BlockHoundInstalled {

	static {
		BlockHound.install();
	}

	private BlockHoundInstalled() {
	}

	/**
	 * Installs BlockHound, if not yet installed, and checks that it catches a blocking
	 * call on a non-blocking thread, so that a test relying on it cannot pass without it.
	 */
	static void check() {
		// Thread.yield is a call BlockHound reports, and it waits for nothing
		assertThatThrownBy(
				() -> Mono.fromRunnable(Thread::yield).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(10)))
			.hasCauseInstanceOf(BlockingOperationError.class);
	}

}
