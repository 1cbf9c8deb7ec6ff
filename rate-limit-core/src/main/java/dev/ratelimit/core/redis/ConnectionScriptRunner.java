package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs commands through the blocking {@link RedisConnection} API of any
 * {@link RedisConnectionFactory} (Jedis, or a factory of another client), on a bounded
 * pool of daemon threads. The caller waits only until its deadline. The script runs with
 * EVALSHA (EVAL after NOSCRIPT): the generic connection API has no FCALL.
 */
final class ConnectionScriptRunner implements ScriptRunner {

	/** Most threads that run calls at a time. */
	static final int MAX_WORKERS = 64;

	/*
	 * When every worker is busy, a call waits in a bounded queue instead of failing:
	 * under load a healthy Redis keeps more calls in flight than there are workers (or
	 * pooled connections), and a failure would make the limiter fall back for a whole
	 * cool-down. Only when the queue is full does a call fail at once. A blocked worker
	 * is bounded by the client's own read timeout.
	 *
	 * A call with a deadline that has passed when a worker takes it, or when it gets a
	 * pooled connection, does not touch Redis: its caller has timed out and fallen back,
	 * so running it would take permits nobody gets. (With Jedis in cluster mode a node's
	 * pooled connection is borrowed only inside the script call, after that check; that
	 * wait is bounded by the pool's max-wait, which should be no longer than the
	 * timeout.) Calls without a deadline (a give-back, a lease release, the warm-up)
	 * always run.
	 */

	/** Most calls waiting for a worker; one more fails at once. */
	static final int MAX_QUEUED = 10_000;

	private final RedisConnectionFactory connectionFactory;

	private final String sha;

	private final byte[] body;

	private final ThreadPoolExecutor workers;

	private volatile @Nullable Boolean cluster;

	ConnectionScriptRunner(RedisConnectionFactory connectionFactory, RedisScript<?> script) {
		this.connectionFactory = connectionFactory;
		this.sha = script.getSha1();
		this.body = script.getScriptAsString().getBytes(StandardCharsets.UTF_8);
		AtomicInteger count = new AtomicInteger();
		this.workers = new ThreadPoolExecutor(MAX_WORKERS, MAX_WORKERS, 30, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(MAX_QUEUED), (task) -> {
					Thread thread = new Thread(task, "ratelimit-redis-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				}, (task, executor) -> {
					if (executor.isShutdown()) {
						throw new RejectedExecutionException("The Redis script runner is closed");
					}
					throw new RejectedExecutionException(
							"The queue of Redis calls is full (" + MAX_QUEUED + " calls waiting for a worker)");
				});
		this.workers.allowCoreThreadTimeOut(true);
	}

	/**
	 * Runs work that nobody waits for past a deadline (a give-back, a lease release, the
	 * warm-up): it runs however long it waited for a worker.
	 */
	private <T> CompletableFuture<T> submit(Callable<T> work) {
		return submit(new Call<>(work, false, 0, null));
	}

	/**
	 * Runs work for a caller that waits until {@code deadline}: if the deadline has
	 * passed when a worker takes it, it does not run.
	 */
	private <T> CompletableFuture<T> submit(Callable<T> work, long deadline) {
		return submit(new Call<>(work, true, deadline, null));
	}

	private <T> CompletableFuture<T> submit(Call<T> call) {
		try {
			this.workers.execute(call);
		}
		catch (RuntimeException ex) {
			call.result.completeExceptionally(ex);
		}
		return call.result;
	}

	private <T> T withConnection(ConnectionCallback<T> callback) throws Exception {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			this.cluster = connection instanceof RedisClusterConnection;
			Call<?> running = Call.RUNNING.get();
			if (running != null && running.abandoned()) {
				// it waited for a pooled connection (Jedis's pool is smaller than the
				// workers) past its deadline
				throw Call.late();
			}
			return callback.doWith(connection);
		}
	}

	@Override
	public boolean isCluster(long deadline) throws Exception {
		Boolean known = this.cluster;
		if (known != null) {
			return known;
		}
		return ScriptRunner.await(submit(() -> withConnection((connection) -> this.cluster), deadline), deadline, true);
	}

	@Override
	public CompletableFuture<Boolean> isClusterAsync(long deadline) {
		Boolean known = this.cluster;
		if (known != null) {
			return CompletableFuture.completedFuture(known);
		}
		return DeadlineTimer.bound(submit(() -> withConnection((connection) -> this.cluster), deadline), deadline);
	}

	private List<Object> run(List<byte[]> keys, List<byte[]> args) throws Exception {
		byte[][] keysAndArgs = new byte[keys.size() + args.size()][];
		for (int i = 0; i < keys.size(); i++) {
			keysAndArgs[i] = keys.get(i);
		}
		for (int i = 0; i < args.size(); i++) {
			keysAndArgs[keys.size() + i] = args.get(i);
		}
		return withConnection((connection) -> {
			Call<?> running = Call.RUNNING.get();
			if (running != null) {
				running.sent = true;
			}
			try {
				return ScriptRunner.asList(
						connection.scriptingCommands().evalSha(this.sha, ReturnType.MULTI, keys.size(), keysAndArgs));
			}
			catch (RuntimeException ex) {
				if (!ScriptRunner.isNoScript(ex)) {
					throw ex;
				}
				return ScriptRunner
					.asList(connection.scriptingCommands().eval(this.body, ReturnType.MULTI, keys.size(), keysAndArgs));
			}
		});
	}

	@Override
	public List<Object> eval(List<byte[]> keys, List<byte[]> args, long deadline, List<Withdrawal> withdrawals)
			throws Exception {
		Runnable withdraw = withdrawals.isEmpty() ? null : () -> withdraw(withdrawals);
		return ScriptRunner.await(submit(new Call<>(() -> run(keys, args), true, deadline, withdraw)), deadline, true);
	}

	/**
	 * Runs the script on a worker, as {@link #eval(List, List, long, List)} does: the
	 * deadline completes the future, which a call still queued then never runs, and a
	 * call running then withdraws its members once it is done.
	 */
	@Override
	public CompletableFuture<List<Object>> evalAsync(List<byte[]> keys, List<byte[]> args, long deadline,
			List<Withdrawal> withdrawals) {
		Runnable withdraw = withdrawals.isEmpty() ? null : () -> withdraw(withdrawals);
		return DeadlineTimer.bound(submit(new Call<>(() -> run(keys, args), true, deadline, withdraw)), deadline);
	}

	/**
	 * Removes the members on the worker that ran the script, after it: its caller did not
	 * get its answer. After a failure of the client (a read timeout, a reset connection)
	 * Redis may not have read the script yet, so the removal may come first; then the
	 * lease lapses after its lease time.
	 */
	private void withdraw(List<Withdrawal> withdrawals) {
		try {
			withConnection((connection) -> {
				for (Withdrawal withdrawal : withdrawals) {
					connection.zSetCommands().zRem(withdrawal.key(), withdrawal.member());
				}
				return null;
			});
		}
		catch (Exception ex) {
			// the lease lapses after its lease time
		}
	}

	@Override
	public CompletableFuture<?> evalAsync(List<byte[]> keys, List<byte[]> args) {
		return submit(() -> run(keys, args));
	}

	@Override
	public CompletableFuture<?> removeMember(byte[] key, byte[] member) {
		return submit(() -> withConnection((connection) -> connection.zSetCommands().zRem(key, member)));
	}

	@Override
	public void delete(byte[] key, long deadline) throws Exception {
		ScriptRunner.await(submit(() -> withConnection((connection) -> connection.keyCommands().del(key)), deadline),
				deadline, true);
	}

	@Override
	public void warmUp() {
		submit(() -> withConnection((connection) -> connection.scriptingCommands().scriptLoad(this.body)));
	}

	@Override
	public void close() {
		for (Runnable queued : this.workers.shutdownNow()) {
			if (queued instanceof Call<?> call) {
				call.result.completeExceptionally(
						new RejectedExecutionException("The Redis script runner was closed before the call ran"));
			}
		}
	}

	/**
	 * A call waiting for a worker, then running on it.
	 */
	private static final class Call<T> implements Runnable {

		private final Callable<T> work;

		private final boolean bounded;

		private final long deadline;

		/**
		 * Run after the work if the work reached Redis but its caller did not get its
		 * answer: the caller had stopped waiting by the time it finished, or it failed
		 * after sending its command.
		 */
		private final @Nullable Runnable afterAbandoned;

		/** Whether the work sent its command to Redis. */
		volatile boolean sent;

		final CompletableFuture<T> result = new CompletableFuture<>();

		Call(Callable<T> work, boolean bounded, long deadline, @Nullable Runnable afterAbandoned) {
			this.work = work;
			this.bounded = bounded;
			this.deadline = deadline;
			this.afterAbandoned = afterAbandoned;
		}

		/**
		 * The call a worker thread is running, for the check once it has a connection.
		 */
		static final ThreadLocal<Call<?>> RUNNING = new ThreadLocal<>();

		static TimeoutException late() {
			return new TimeoutException("Redis did not answer in time");
		}

		/**
		 * Whether its caller has timed out (or given up) and fallen back: running it
		 * would only charge Redis.
		 */
		boolean abandoned() {
			return this.bounded && (this.result.isDone() || this.deadline - System.nanoTime() <= 0);
		}

		@Override
		public void run() {
			if (abandoned()) {
				this.result.completeExceptionally(late());
				return;
			}
			RUNNING.set(this);
			boolean answered;
			boolean failed = false;
			try {
				answered = this.result.complete(this.work.call());
			}
			catch (Throwable ex) {
				failed = true;
				answered = this.result.completeExceptionally(ex);
			}
			finally {
				RUNNING.remove();
			}
			if ((!answered || failed) && this.sent && this.afterAbandoned != null) {
				// its caller timed out (or gave up) while it ran, or the client failed
				// after sending it
				this.afterAbandoned.run();
			}
		}

	}

	@FunctionalInterface
	private interface ConnectionCallback<T> {

		@Nullable T doWith(RedisConnection connection) throws Exception;

	}

}
