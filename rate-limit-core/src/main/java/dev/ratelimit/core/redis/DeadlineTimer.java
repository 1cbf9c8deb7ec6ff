package dev.ratelimit.core.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Ends asynchronous Redis calls at their deadline: a call not answered by then completes
 * with a {@link TimeoutException}, as a caller that waits would have stopped waiting.
 */
final class DeadlineTimer {

	/*
	 * One daemon thread for every limiter of the JVM, as CompletableFuture.orTimeout has
	 * one: it only hands the completion of a late call to the common fork-join pool,
	 * where what depends on it runs (the failure policy's decision here, and the caller's
	 * own stages), so that none of that delays another call's timeout. A call answered in
	 * time cancels its timer, which leaves the queue.
	 */
	private static final ScheduledThreadPoolExecutor TIMER = timer();

	private DeadlineTimer() {
	}

	private static ScheduledThreadPoolExecutor timer() {
		ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "ratelimit-redis-deadline");
			thread.setDaemon(true);
			return thread;
		});
		timer.setRemoveOnCancelPolicy(true);
		return timer;
	}

	/**
	 * Completes a future with a {@link TimeoutException} once the deadline passes, unless
	 * it is done by then.
	 * @param future the call's future
	 * @param deadline the deadline, on {@link System#nanoTime()}
	 * @return the same future
	 */
	static <T> CompletableFuture<T> bound(CompletableFuture<T> future, long deadline) {
		long remaining = deadline - System.nanoTime();
		if (remaining <= 0) {
			future.completeExceptionally(late());
			return future;
		}
		if (!future.isDone()) {
			// ended off the timer's thread: what depends on the call (the failure
			// policy's
			// local decision, the caller's own stages, a web request's handling) must not
			// hold up the other calls' timeouts
			ScheduledFuture<?> timeout = TIMER.schedule(
					() -> ForkJoinPool.commonPool().execute(() -> future.completeExceptionally(late())), remaining,
					TimeUnit.NANOSECONDS);
			future.whenComplete((result, ex) -> timeout.cancel(false));
		}
		return future;
	}

	static TimeoutException late() {
		return new TimeoutException("Redis did not answer in time");
	}

}
