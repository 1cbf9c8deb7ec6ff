package dev.ratelimit.example.quotes;

import java.time.Duration;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Installs BlockHound for a test class's JVM (each test class runs in a JVM of its own,
 * see the pom), so that a blocking call on a Netty event loop or another non-blocking
 * Reactor thread fails the request that made it, and with it the test.
 */
public final class BlockHoundInstalled {

	static {
		BlockHound.install();
	}

	private BlockHoundInstalled() {
	}

	/**
	 * Installs BlockHound, if not yet installed, and checks that it catches a blocking
	 * call on a non-blocking thread, so that a test relying on it cannot pass without it.
	 */
	public static void check() {
		// Thread.yield is a call BlockHound reports, and it waits for nothing
		assertThatThrownBy(
				() -> Mono.fromRunnable(Thread::yield).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(10)))
			.hasCauseInstanceOf(BlockingOperationError.class);
	}

}
