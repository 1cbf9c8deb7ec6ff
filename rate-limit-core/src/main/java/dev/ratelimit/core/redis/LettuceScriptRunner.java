package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs commands through Lettuce's asynchronous API on the factory's (normally shared) native connection: no thread is
 * blocked but the caller's, and that one only until its deadline. Lettuce routes each command to the node that owns
 * its first key, in a cluster, and reconnects by itself after an outage.
 *
 * <p>
 * The native connection is obtained once, on a background thread (connecting may block for the factory's connect
 * timeout when Redis is down), and dropped after a failure so that the next attempt obtains a fresh one.
 */
final class LettuceScriptRunner implements ScriptRunner {

	private final LettuceConnectionFactory connectionFactory;

	private final String sha;

	private final byte[] body;

	private final ExecutorService connector = Executors.newSingleThreadExecutor((task) -> {
		Thread thread = new Thread(task, "ratelimit-redis-connect");
		thread.setDaemon(true);
		return thread;
	});

	private final AtomicReference<@Nullable CompletableFuture<Native>> connection = new AtomicReference<>();

	LettuceScriptRunner(RedisConnectionFactory connectionFactory, RedisScript<?> script) {
		this.connectionFactory = (LettuceConnectionFactory) connectionFactory;
		this.sha = script.getSha1();
		this.body = script.getScriptAsString().getBytes(StandardCharsets.UTF_8);
	}

	static boolean supports(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory;
	}

	@Override
	public boolean isCluster(long deadline) {
		return this.connectionFactory.isClusterAware();
	}

	private CompletableFuture<Native> connection() {
		CompletableFuture<Native> current = this.connection.get();
		if (current != null && !current.isCompletedExceptionally() && !current.isCancelled()) {
			return current;
		}
		CompletableFuture<Native> fresh = new CompletableFuture<>();
		if (this.connection.compareAndSet(current, fresh)) {
			try {
				this.connector.execute(() -> {
					try {
						RedisConnection opened = this.connectionFactory.getConnection();
						try {
							fresh.complete(new Native(opened, commands(opened)));
						}
						catch (RuntimeException ex) {
							opened.close();
							throw ex;
						}
					}
					catch (Throwable ex) {
						fresh.completeExceptionally(ex);
					}
				});
			}
			catch (RuntimeException ex) {
				fresh.completeExceptionally(ex);
			}
			return fresh;
		}
		return connection();
	}

	@SuppressWarnings("unchecked")
	private static RedisClusterAsyncCommands<byte[], byte[]> commands(RedisConnection connection) {
		return ((LettuceConnection) connection).getNativeConnection();
	}

	private RedisClusterAsyncCommands<byte[], byte[]> commands(long deadline) throws Exception {
		return ScriptRunner.await(connection(), deadline, false).commands;
	}

	/**
	 * Forgets the native connection after a failure; the next call obtains it again.
	 */
	private void failed(Throwable ex) {
		CompletableFuture<Native> current = this.connection.get();
		if (current != null && current.isDone() && !current.isCompletedExceptionally()
				&& this.connection.compareAndSet(current, null)) {
			current.join().connection.close();
		}
	}

	@Override
	public List<Object> eval(List<byte[]> keys, List<byte[]> args, long deadline) throws Exception {
		try {
			RedisClusterAsyncCommands<byte[], byte[]> commands = commands(deadline);
			byte[][] keyArray = keys.toArray(new byte[0][]);
			byte[][] argArray = args.toArray(new byte[0][]);
			RedisFuture<Object> result = commands.evalsha(this.sha, ScriptOutputType.MULTI, keyArray, argArray);
			try {
				return ScriptRunner.asList(ScriptRunner.await(result, deadline, true));
			}
			catch (Exception ex) {
				if (!ScriptRunner.isNoScript(ex)) {
					throw ex;
				}
				RedisFuture<Object> loaded = commands.eval(this.body, ScriptOutputType.MULTI, keyArray, argArray);
				return ScriptRunner.asList(ScriptRunner.await(loaded, deadline, true));
			}
		}
		catch (Exception ex) {
			failed(ex);
			throw ex;
		}
	}

	@Override
	public CompletableFuture<?> evalAsync(List<byte[]> keys, List<byte[]> args) {
		byte[][] keyArray = keys.toArray(new byte[0][]);
		byte[][] argArray = args.toArray(new byte[0][]);
		return connection().thenCompose((connection) -> connection.commands
			.<Object>evalsha(this.sha, ScriptOutputType.MULTI, keyArray, argArray)
			.handle((result, ex) -> {
				if (ex == null) {
					return CompletableFuture.completedFuture(result);
				}
				if (ScriptRunner.isNoScript(ex)) {
					return connection.commands.<Object>eval(this.body, ScriptOutputType.MULTI, keyArray, argArray)
						.toCompletableFuture();
				}
				return CompletableFuture.failedFuture(unwrap(ex));
			})
			.thenCompose((next) -> next));
	}

	private static Throwable unwrap(Throwable ex) {
		return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
	}

	@Override
	public CompletableFuture<?> removeMember(byte[] key, byte[] member) {
		return connection().thenCompose((connection) -> connection.commands.zrem(key, member));
	}

	@Override
	public void delete(byte[] key, long deadline) throws Exception {
		try {
			ScriptRunner.await(commands(deadline).del(key), deadline, true);
		}
		catch (Exception ex) {
			failed(ex);
			throw ex;
		}
	}

	@Override
	public void ping(long deadline) throws Exception {
		try {
			ScriptRunner.await(commands(deadline).ping(), deadline, true);
		}
		catch (Exception ex) {
			failed(ex);
			throw ex;
		}
	}

	@Override
	public void warmUp() {
		connection().thenCompose((connection) -> connection.commands.scriptLoad(this.body));
	}

	@Override
	public void close() {
		CompletableFuture<Native> current = this.connection.getAndSet(null);
		if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
			current.join().connection.close();
		}
		this.connector.shutdownNow();
	}

	private record Native(RedisConnection connection, RedisClusterAsyncCommands<byte[], byte[]> commands) {
	}

}
