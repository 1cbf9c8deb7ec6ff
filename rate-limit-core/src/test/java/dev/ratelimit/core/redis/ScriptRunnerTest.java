package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link ScriptRunner#await}: an answer that arrives between the caller's timeout and its
 * cancel is the caller's, so that nobody is left holding what Redis granted; a future
 * that stays unanswered times out and is cancelled.
 */
class ScriptRunnerTest {

	@Test
	void anAnswerArrivingBetweenTheTimeoutAndTheCancelIsReturned() throws Exception {
		// the wait runs out, and the answer lands before the caller can cancel
		CompletableFuture<String> answeredJustTooLate = answeredAsTheWaitFails(new TimeoutException());
		// a deadline far off: the overridden wait runs out by itself
		assertThat(ScriptRunner.await(answeredJustTooLate, System.nanoTime() + Duration.ofMinutes(1).toNanos(), true))
			.isEqualTo("granted");
	}

	@Test
	void anAnswerArrivingAsTheCallerIsInterruptedIsReturnedWithTheFlagKept() throws Exception {
		CompletableFuture<String> answeredAsInterrupted = answeredAsTheWaitFails(new InterruptedException());
		try {
			assertThat(ScriptRunner.await(answeredAsInterrupted, System.nanoTime() + Duration.ofMinutes(1).toNanos(),
					true))
				.isEqualTo("granted");
		}
		finally {
			assertThat(Thread.interrupted()).isTrue();
		}
	}

	/**
	 * Returns a future whose first wait fails as given, the answer landing just then;
	 * later waits see the answer.
	 */
	private static CompletableFuture<String> answeredAsTheWaitFails(Exception failure) {
		return new CompletableFuture<>() {

			@Override
			public String get(long timeout, TimeUnit unit)
					throws InterruptedException, ExecutionException, TimeoutException {
				if (complete("granted")) {
					if (failure instanceof InterruptedException interrupted) {
						throw interrupted;
					}
					throw (TimeoutException) failure;
				}
				return super.get(timeout, unit);
			}

		};
	}

	@Test
	void aFutureStillUnansweredAtTheDeadlineIsCancelled() {
		CompletableFuture<String> unanswered = new CompletableFuture<>();
		assertThatExceptionOfType(TimeoutException.class)
			.isThrownBy(() -> ScriptRunner.await(unanswered, System.nanoTime() + 1_000_000, true))
			.withMessage("Redis did not answer in time");
		assertThat(unanswered).isCancelled();
	}

}
