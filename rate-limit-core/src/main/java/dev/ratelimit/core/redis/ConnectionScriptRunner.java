package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs commands through the blocking {@link RedisConnection} API of any {@link RedisConnectionFactory} (Jedis, or a
 * factory of another client), on a bounded pool of daemon threads, while the caller waits only until its deadline. A
 * blocked worker is bounded by the client's own read timeout; when every worker is busy (Redis hangs), a call fails at
 * once instead of queueing. The script runs with EVALSHA (EVAL after NOSCRIPT), not as a function: the generic
 * connection API has no FCALL.
 */
final class ConnectionScriptRunner implements ScriptRunner {

	private static final int MAX_WORKERS = 64;

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
		this.workers = new ThreadPoolExecutor(0, MAX_WORKERS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(task) -> {
					Thread thread = new Thread(task, "ratelimit-redis-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
	}

	private <T> CompletableFuture<T> submit(Callable<T> work) {
		CompletableFuture<T> result = new CompletableFuture<>();
		try {
			this.workers.execute(() -> {
				try {
					result.complete(work.call());
				}
				catch (Throwable ex) {
					result.completeExceptionally(ex);
				}
			});
		}
		catch (RuntimeException ex) {
			result.completeExceptionally(ex);
		}
		return result;
	}

	private <T> T withConnection(ConnectionCallback<T> callback) throws Exception {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			this.cluster = connection instanceof RedisClusterConnection;
			return callback.doWith(connection);
		}
	}

	@Override
	public boolean isCluster(long deadline) throws Exception {
		Boolean known = this.cluster;
		if (known != null) {
			return known;
		}
		return ScriptRunner.await(submit(() -> withConnection((connection) -> this.cluster)), deadline, true);
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
			try {
				return ScriptRunner.asList(connection.scriptingCommands()
					.evalSha(this.sha, ReturnType.MULTI, keys.size(), keysAndArgs));
			}
			catch (RuntimeException ex) {
				if (!ScriptRunner.isNoScript(ex)) {
					throw ex;
				}
				return ScriptRunner.asList(connection.scriptingCommands()
					.eval(this.body, ReturnType.MULTI, keys.size(), keysAndArgs));
			}
		});
	}

	@Override
	public List<Object> eval(List<byte[]> keys, List<byte[]> args, long deadline) throws Exception {
		return ScriptRunner.await(submit(() -> run(keys, args)), deadline, true);
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
		ScriptRunner.await(submit(() -> withConnection((connection) -> connection.keyCommands().del(key))), deadline,
				true);
	}

	@Override
	public void ping(long deadline) throws Exception {
		ScriptRunner.await(submit(() -> withConnection(RedisConnection::ping)), deadline, true);
	}

	@Override
	public void warmUp() {
		submit(() -> withConnection((connection) -> connection.scriptingCommands().scriptLoad(this.body)));
	}

	@Override
	public void close() {
		this.workers.shutdownNow();
	}

	@FunctionalInterface
	private interface ConnectionCallback<T> {

		@Nullable T doWith(RedisConnection connection) throws Exception;

	}

}
