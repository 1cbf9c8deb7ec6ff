package dev.ratelimit.spring.reactive;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The starter's BlockHound integration: on a non-blocking thread, the in-memory backend's
 * back-off (what a thread does while another decides the same key) passes, and the same
 * waits anywhere else still fail.
 */
class BlockHoundIntegrationTests {

	private static final String SLOT = "dev.ratelimit.core.memory.Slot";

	@BeforeAll
	static void blockHound() {
		BlockHoundInstalled.check();
	}

	@Test
	void allowsTheInMemoryBackendsBackOffOnAnEventLoop() throws Exception {
		Method backOff = slotMethod("backOff");
		Method contended = slotMethod("contended");
		assertThatCode(() -> onNonBlockingThread(() -> {
			// past the spins: Thread.yield and LockSupport.parkNanos
			backOff.invoke(null, 1_000);
			contended.invoke(null, 5);
			return true;
		})).doesNotThrowAnyException();
	}

	@Test
	void stillFailsTheSameWaitsElsewhere() {
		assertThatThrownBy(() -> onNonBlockingThread(() -> {
			LockSupport.parkNanos(1);
			return true;
		})).hasCauseInstanceOf(BlockingOperationError.class);
		assertThatThrownBy(() -> onNonBlockingThread(() -> {
			Thread.yield();
			return true;
		})).hasCauseInstanceOf(BlockingOperationError.class);
	}

	private static Method slotMethod(String name) throws Exception {
		Method method = Class.forName(SLOT).getDeclaredMethod(name, int.class);
		method.setAccessible(true);
		return method;
	}

	private static void onNonBlockingThread(Callable<Boolean> call) {
		Mono.fromCallable(call).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(10));
	}

}
