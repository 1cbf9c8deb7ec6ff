package dev.ratelimit.spring.fuzz;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * Runs each try of a fuzz property on a worker thread and fails the try when it does not
 * finish within a bound, with the worker's stack: a hang is a failure. The bound is
 * seconds, far above what a try takes, so that a busy 2-core machine never trips it; it
 * is no timing measure. A worker that hangs is left behind (a daemon) and replaced.
 */
final class TryBound implements AutoCloseable {

	private final Duration bound;

	private volatile Thread worker;

	private ExecutorService executor;

	TryBound(Duration bound) {
		this.bound = bound;
		this.executor = newExecutor();
	}

	/**
	 * Runs a task within the bound.
	 * @param what what the task does, for the failure message
	 * @param task the task
	 * @return what the task returned
	 * @throws Exception what the task threw
	 */
	<T> T call(String what, Callable<T> task) throws Exception {
		Future<T> future = this.executor.submit(task);
		try {
			return future.get(this.bound.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			Thread stuck = this.worker;
			String stack = (stuck != null) ? Arrays.stream(stuck.getStackTrace())
				.limit(40)
				.map((element) -> "\tat " + element)
				.collect(Collectors.joining(System.lineSeparator())) : "(no worker)";
			future.cancel(true);
			this.executor.shutdownNow();
			this.executor = newExecutor();
			throw new AssertionError(what + " did not finish within " + this.bound.toSeconds()
					+ " s (a hang); the worker" + " was at:" + System.lineSeparator() + stack);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof Exception exception) {
				throw exception;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	private ExecutorService newExecutor() {
		return Executors.newSingleThreadExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "fuzz-try");
			thread.setDaemon(true);
			this.worker = thread;
			return thread;
		});
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
