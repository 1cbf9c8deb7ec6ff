package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.async.RedisFunctionAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs commands through Lettuce's asynchronous API on a connection of its own
 * (standalone, Sentinel or Cluster). Only the caller's thread waits, and only until its
 * deadline; an asynchronous call waits on no thread. The script runs as a Redis 7
 * function, else with EVALSHA.
 */
final class LettuceScriptRunner implements ScriptRunner {

	private static final Log logger = LogFactory.getLog(LettuceScriptRunner.class);

	/** How long a background FUNCTION LOAD may take before another may start. */
	private static final Duration LOAD_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * Error codes of commands Redis refuses before running a function that may write, but
	 * runs as scripts.
	 */
	private static final List<String> REFUSED_BEFORE_RUNNING = List.of("OOM ", "READONLY ", "NOREPLICAS ", "MISCONF ");

	private final LettuceConnectionFactory connectionFactory;

	private final String sha;

	private final byte[] body;

	private final String function;

	private final String library;

	/*
	 * The script runs as a Redis 7 function: FUNCTION LOAD of its library once, then
	 * FCALL per call, which spares Redis building the script's helpers on every call.
	 * Where Redis has no functions (before 7, or FCALL renamed away or not permitted) the
	 * first FCALL says so, and EVALSHA (EVAL after NOSCRIPT) is used from then on. Where
	 * the function is missing (a fresh or restarted server, a new cluster node), that
	 * call runs with EVALSHA within its deadline and the library loads in the background,
	 * on every master of a cluster: a call never waits for a load. A call that Redis
	 * refuses before running a function but would run as a script (over maxmemory, on a
	 * replica, without enough replicas, after a failed save) also runs with EVALSHA, so
	 * both forms answer every call alike.
	 */
	private final AtomicReference<Functions> functions = new AtomicReference<>(Functions.UNKNOWN);

	/** Whether a FUNCTION LOAD is on its way; there is one at a time. */
	private final AtomicBoolean loading = new AtomicBoolean();

	/** Whether a read of the cluster's topology is on its way; there is one at a time. */
	private final AtomicBoolean refreshing = new AtomicBoolean();

	/** The latest load of the library, done once it has been answered (or has failed). */
	private volatile CompletableFuture<?> libraryLoad = CompletableFuture.completedFuture(null);

	private final ExecutorService connector = Executors.newSingleThreadExecutor((task) -> {
		Thread thread = new Thread(task, "ratelimit-redis-connect");
		thread.setDaemon(true);
		return thread;
	});

	/*
	 * The connection opens on the connector thread, as connecting may block for the
	 * factory's connect timeout when Redis is down. It is replaced only once closed: by
	 * the next call, or at once by reconnectIfClosed, which the limiter's checks call
	 * while Redis is down, rather than after Lettuce's own back-off (which grows to 30
	 * s). Lettuce routes each command to the node that owns its first key, in a cluster.
	 */
	private final AtomicReference<@Nullable CompletableFuture<Native>> connection = new AtomicReference<>();

	LettuceScriptRunner(RedisConnectionFactory connectionFactory, DecideScript script) {
		this.connectionFactory = (LettuceConnectionFactory) connectionFactory;
		this.sha = script.script().getSha1();
		this.body = script.script().getScriptAsString().getBytes(StandardCharsets.UTF_8);
		this.function = script.functionName();
		this.library = script.library();
	}

	static boolean supports(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory;
	}

	@Override
	public boolean isCluster(long deadline) {
		return this.connectionFactory.isClusterAware();
	}

	@Override
	public CompletableFuture<Boolean> isClusterAsync(long deadline) {
		return CompletableFuture.completedFuture(this.connectionFactory.isClusterAware());
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
						fresh.complete(open());
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

	/**
	 * Opens a connection of this runner's own through the factory's client, or, where the
	 * client cannot open one by itself (a static master/replica setup), borrows the
	 * factory's connection.
	 */
	private Native open() {
		AbstractRedisClient client = this.connectionFactory.getNativeClient();
		try {
			if (client instanceof RedisClusterClient cluster) {
				StatefulRedisClusterConnection<byte[], byte[]> own = cluster.connect(ByteArrayCodec.INSTANCE);
				return new Native(own.async(), own, own);
			}
			if (client instanceof RedisClient standalone) {
				StatefulRedisConnection<byte[], byte[]> own = standalone.connect(ByteArrayCodec.INSTANCE);
				return new Native(own.async(), own, own);
			}
		}
		catch (IllegalStateException | IllegalArgumentException ex) {
			// the client has no address of its own (static master/replica): the factory
			// knows how to connect
		}
		RedisConnection borrowed = this.connectionFactory.getConnection();
		try {
			RedisClusterAsyncCommands<byte[], byte[]> commands = commands(borrowed);
			StatefulConnection<byte[], byte[]> stateful = (commands instanceof RedisAsyncCommands<byte[], byte[]> async)
					? async.getStatefulConnection()
					: ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) commands).getStatefulConnection();
			return new Native(commands, stateful, borrowed);
		}
		catch (RuntimeException ex) {
			borrowed.close();
			throw ex;
		}
	}

	@SuppressWarnings("unchecked")
	private static RedisClusterAsyncCommands<byte[], byte[]> commands(RedisConnection connection) {
		return ((LettuceConnection) connection).getNativeConnection();
	}

	private Native connection(long deadline) throws Exception {
		return ScriptRunner.await(connection(), deadline, false);
	}

	@Override
	public boolean isConnected() {
		Native open = opened();
		return open != null && open.isUp(-1);
	}

	@Override
	public boolean isConnected(int slot) {
		Native open = opened();
		return open != null && open.isUp(slot);
	}

	@Override
	public boolean tellsMastersApart() {
		return this.connectionFactory.isClusterAware() && opened() != null;
	}

	@Override
	public @Nullable String nodeOf(int slot) {
		Native open = opened();
		Partitions partitions = (open != null) ? open.partitions() : null;
		RedisClusterNode master = (partitions != null) ? partitions.getMasterBySlot(slot) : null;
		return (master != null) ? master.getNodeId() : null;
	}

	@Override
	public List<Master> masters() {
		Native open = opened();
		Partitions partitions = (open != null) ? open.partitions() : null;
		if (partitions == null) {
			return List.of();
		}
		List<Master> masters = new ArrayList<>();
		for (RedisClusterNode node : partitions) {
			if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.hasNoSlots()) {
				List<Integer> slots = node.getSlots();
				masters.add(new Master(node.getNodeId(), ranges(slots), slots.size()));
			}
		}
		return masters;
	}

	/**
	 * Returns ascending slots as ranges: {@code 0-5460,10923}.
	 */
	static String ranges(List<Integer> slots) {
		StringBuilder ranges = new StringBuilder();
		int i = 0;
		while (i < slots.size()) {
			int first = slots.get(i);
			int last = first;
			while (i + 1 < slots.size() && slots.get(i + 1) == last + 1) {
				last = slots.get(++i);
			}
			if (!ranges.isEmpty()) {
				ranges.append(',');
			}
			ranges.append(first);
			if (last != first) {
				ranges.append('-').append(last);
			}
			i++;
		}
		return ranges.toString();
	}

	/**
	 * Returns the connection if it is open (it may be down), or {@code null} while it is
	 * opening or failed to.
	 */
	private @Nullable Native opened() {
		CompletableFuture<Native> current = this.connection.get();
		return (current != null && current.isDone() && !current.isCompletedExceptionally()) ? current.join() : null;
	}

	/**
	 * Replaces the connection if it is closed: Lettuce's own reconnection waits longer
	 * and longer between attempts (up to 30 s by default), while a new connection is
	 * tried at once. In a cluster, also reads the topology again, so that a replica
	 * promoted by a failover gets its slots' calls, without waiting for it. A cluster
	 * connection is replaced only when every master's connection is down: Lettuce
	 * reconnects each master's by itself, and replacing the whole would drop the calls on
	 * the masters that answer.
	 */
	@Override
	public void reconnectIfClosed() {
		CompletableFuture<Native> current = this.connection.get();
		if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
			Native open = current.join();
			if (open.isDown(-1)) {
				forget(current);
			}
		}
		if (this.connectionFactory.getNativeClient() instanceof RedisClusterClient cluster
				&& this.refreshing.compareAndSet(false, true)) {
			// without waiting: a refresh waits for every node's view, a hung master's
			// for the client's command timeout, and the checks of the other masters must
			// go on meanwhile
			try {
				cluster.refreshPartitionsAsync().whenComplete((refreshed, ex) -> this.refreshing.set(false));
			}
			catch (RuntimeException ex) {
				// no node answered: the next check tries again
				this.refreshing.set(false);
			}
		}
	}

	/**
	 * Forgets the native connection after a failure if it is closed; the next call opens
	 * a new one. A connection that is up stays: an error reply (out of memory, a missing
	 * permission) or a late answer is no reason to drop every other call in flight on it.
	 */
	private void failed(Throwable ex) {
		if (ex instanceof InterruptedException) {
			// the caller's thread was interrupted; the connection is fine
			return;
		}
		CompletableFuture<Native> current = this.connection.get();
		if (current != null && current.isDone() && !current.isCompletedExceptionally() && current.join().isDown(-1)) {
			forget(current);
		}
	}

	/**
	 * Forgets the native connection after a failure if it is closed, as
	 * {@link #failed(Throwable)} does, on the connector's thread: closing a connection
	 * waits for it, and the caller may be Lettuce's event loop.
	 */
	private void failedWithoutWaiting(Throwable ex) {
		CompletableFuture<Native> current = this.connection.get();
		if (current != null && current.isDone() && !current.isCompletedExceptionally() && current.join().isDown(-1)) {
			try {
				this.connector.execute(() -> failed(ex));
			}
			catch (RejectedExecutionException closed) {
				// the runner is closed, and its connection with it
			}
		}
	}

	private void forget(CompletableFuture<Native> current) {
		if (this.connection.compareAndSet(current, null)) {
			current.join().close();
		}
	}

	/**
	 * Waits for a reply until the deadline. A late reply is not cancelled while the
	 * connection is up: Redis runs the call all the same, and so it counts, though its
	 * caller decides without it. A call still queued while the connection is down is
	 * cancelled, so that it is not sent after a reconnection, long after its caller gave
	 * up.
	 */
	private static List<Object> awaitReply(RedisFuture<Object> reply, long deadline, Native connection, int slot)
			throws Exception {
		try {
			return ScriptRunner.asList(ScriptRunner.await(reply, deadline, false, true));
		}
		catch (TimeoutException ex) {
			if (!connection.isUp(slot) && !reply.cancel(true) && reply.isDone() && !reply.isCancelled()) {
				// answered between the timeout and the cancel: the answer is the caller's
				return ScriptRunner.asList(ScriptRunner.await(reply, System.nanoTime(), false));
			}
			throw ex;
		}
	}

	/**
	 * Runs the script with FCALL, and with EVALSHA (then EVAL after NOSCRIPT) within the
	 * same deadline where the function cannot run (see the comment on {@code functions}).
	 */
	@Override
	public List<Object> eval(List<byte[]> keys, List<byte[]> args, long deadline, List<Withdrawal> withdrawals)
			throws Exception {
		RedisClusterAsyncCommands<byte[], byte[]> commands = null;
		try {
			Native connection = connection(deadline);
			byte[][] keyArray = keys.toArray(new byte[0][]);
			byte[][] argArray = args.toArray(new byte[0][]);
			int slot = connection.slotOf(keyArray);
			if (connection.isDown(slot)) {
				// Lettuce would hold the call until it reconnects: a caller of a Redis
				// (or a cluster's master) that is gone learns it now
				throw new RedisConnectionFailureException("The connection to Redis is down");
			}
			commands = connection.commands;
			if (this.functions.get() != Functions.UNSUPPORTED) {
				RedisFuture<Object> called = commands.fcall(this.function, ScriptOutputType.MULTI, keyArray, argArray);
				try {
					List<Object> reply = awaitReply(called, deadline, connection, slot);
					this.functions.compareAndSet(Functions.UNKNOWN, Functions.SUPPORTED);
					return reply;
				}
				catch (Exception ex) {
					if (!runsAsScriptInstead(ex, commands)) {
						throw ex;
					}
				}
			}
			return evalScript(connection, keyArray, argArray, deadline, slot);
		}
		catch (Exception ex) {
			if (commands != null) {
				// queued behind the script on its connection, before a failure closes it:
				// Redis runs them after it
				for (Withdrawal withdrawal : withdrawals) {
					commands.zrem(withdrawal.key(), withdrawal.member());
				}
			}
			failed(ex);
			throw ex;
		}
	}

	private List<Object> evalScript(Native connection, byte[][] keyArray, byte[][] argArray, long deadline, int slot)
			throws Exception {
		RedisClusterAsyncCommands<byte[], byte[]> commands = connection.commands;
		// after a function that could not run, a retry past the deadline would run in
		// Redis for nobody
		ScriptRunner.checkDeadline(deadline);
		RedisFuture<Object> result = commands.evalsha(this.sha, ScriptOutputType.MULTI, keyArray, argArray);
		try {
			return awaitReply(result, deadline, connection, slot);
		}
		catch (Exception ex) {
			if (!ScriptRunner.isNoScript(ex)) {
				throw ex;
			}
			ScriptRunner.checkDeadline(deadline);
			RedisFuture<Object> loaded = commands.eval(this.body, ScriptOutputType.MULTI, keyArray, argArray);
			return awaitReply(loaded, deadline, connection, slot);
		}
	}

	/**
	 * Runs the script as {@link #eval(List, List, long, List)} does, composing on the
	 * connection and on each reply: FCALL, then EVALSHA where the function cannot run,
	 * then EVAL after NOSCRIPT, all within the deadline.
	 */
	@Override
	public CompletableFuture<List<Object>> evalAsync(List<byte[]> keys, List<byte[]> args, long deadline,
			List<Withdrawal> withdrawals) {
		PendingEval call = new PendingEval(keys.toArray(new byte[0][]), args.toArray(new byte[0][]), withdrawals);
		call.result.whenComplete(call::ended);
		DeadlineTimer.bound(call.result, deadline);
		if (!call.result.isDone()) {
			connection().whenComplete(call::connected);
		}
		return call.result;
	}

	@Override
	public CompletableFuture<?> evalAsync(List<byte[]> keys, List<byte[]> args) {
		byte[][] keyArray = keys.toArray(new byte[0][]);
		byte[][] argArray = args.toArray(new byte[0][]);
		return connection().thenCompose((connection) -> {
			RedisClusterAsyncCommands<byte[], byte[]> commands = connection.commands;
			if (this.functions.get() == Functions.UNSUPPORTED) {
				return evalScriptAsync(commands, keyArray, argArray);
			}
			return commands.<Object>fcall(this.function, ScriptOutputType.MULTI, keyArray, argArray)
				.handle((result, ex) -> {
					if (ex == null) {
						this.functions.compareAndSet(Functions.UNKNOWN, Functions.SUPPORTED);
						return CompletableFuture.completedFuture(result);
					}
					if (runsAsScriptInstead(ex, commands)) {
						return evalScriptAsync(commands, keyArray, argArray);
					}
					return CompletableFuture.<Object>failedFuture(unwrap(ex));
				})
				.thenCompose((next) -> next);
		});
	}

	private CompletionStage<Object> evalScriptAsync(RedisClusterAsyncCommands<byte[], byte[]> commands,
			byte[][] keyArray, byte[][] argArray) {
		return commands.<Object>evalsha(this.sha, ScriptOutputType.MULTI, keyArray, argArray).handle((result, ex) -> {
			if (ex == null) {
				return CompletableFuture.completedFuture(result);
			}
			if (ScriptRunner.isNoScript(ex)) {
				return commands.<Object>eval(this.body, ScriptOutputType.MULTI, keyArray, argArray);
			}
			return CompletableFuture.<Object>failedFuture(unwrap(ex));
		}).thenCompose((next) -> next);
	}

	/**
	 * Returns whether a call that FCALL failed runs as a script instead, having noted
	 * what the failure tells: that Redis has no functions, or that the library needs
	 * loading.
	 */
	private boolean runsAsScriptInstead(Throwable ex, RedisFunctionAsyncCommands<byte[], byte[]> commands) {
		String error = errorReply(ex);
		if (error == null) {
			return false;
		}
		if (isFunctionMissing(error)) {
			loadLibrary(commands);
			return true;
		}
		if (isFunctionsUnavailable(error)) {
			unsupported(error);
			return true;
		}
		return isRefusedBeforeRunning(error);
	}

	private void unsupported(String error) {
		if (this.functions.getAndSet(Functions.UNSUPPORTED) != Functions.UNSUPPORTED && logger.isInfoEnabled()) {
			logger.info("Redis does not run the rate limiter's function library (" + error
					+ "); running its script with EVALSHA instead");
		}
	}

	/**
	 * Loads the function library in the background, unless a load is on its way: on every
	 * master of a cluster, as Lettuce sends FUNCTION LOAD to one node only. A library
	 * that exists already counts as loaded. An error that will not go away (no FUNCTION
	 * command, no permission, a library the server rejects) means functions are
	 * unavailable; after any other failure, the next FCALL that misses the function tries
	 * again.
	 */
	private void loadLibrary(RedisFunctionAsyncCommands<byte[], byte[]> commands) {
		if (this.functions.get() == Functions.UNSUPPORTED || !this.loading.compareAndSet(false, true)) {
			return;
		}
		CompletableFuture<Void> loaded;
		try {
			if (commands instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
				loaded = loadOnEveryMaster(cluster.getStatefulConnection());
			}
			else {
				loaded = loadOn(commands);
			}
		}
		catch (RuntimeException ex) {
			loaded = CompletableFuture.failedFuture(ex);
		}
		this.libraryLoad = loaded.orTimeout(LOAD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
			.whenComplete((result, ex) -> {
				this.loading.set(false);
				if (ex == null) {
					this.functions.compareAndSet(Functions.UNKNOWN, Functions.SUPPORTED);
					return;
				}
				String error = errorReply(ex);
				if (error != null && isPermanentLoadFailure(error)) {
					unsupported(error);
				}
				else if (logger.isDebugEnabled()) {
					logger.debug("Could not load the rate limiter's function library; will try again", ex);
				}
			});
	}

	private CompletableFuture<Void> loadOnEveryMaster(StatefulRedisClusterConnection<byte[], byte[]> cluster) {
		List<CompletableFuture<Void>> loads = new ArrayList<>();
		for (RedisClusterNode node : cluster.getPartitions()) {
			if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
				loads.add(cluster.getConnectionAsync(node.getNodeId())
					.thenCompose((nodeConnection) -> loadOn(nodeConnection.async())));
			}
		}
		return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]));
	}

	private CompletableFuture<Void> loadOn(RedisFunctionAsyncCommands<byte[], byte[]> commands) {
		return commands.functionLoad(this.library).handle((name, ex) -> {
			if (ex != null && !isAlreadyLoaded(errorReply(ex))) {
				throw new CompletionException(unwrap(ex));
			}
			return (Void) null;
		}).toCompletableFuture();
	}

	/**
	 * Returns the error reply of Redis that caused a failure, or {@code null} if it is no
	 * error reply (a timeout, a lost connection).
	 */
	static @Nullable String errorReply(@Nullable Throwable ex) {
		for (Throwable current = ex; current != null; current = current.getCause()) {
			if (current instanceof RedisCommandExecutionException) {
				return (current.getMessage() != null) ? current.getMessage() : "";
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return null;
	}

	/**
	 * FCALL of a function that is not loaded: {@code ERR Function not found}.
	 */
	static boolean isFunctionMissing(String error) {
		return error.toLowerCase(Locale.ROOT).startsWith("err function not found");
	}

	/**
	 * FCALL where Redis has no functions:
	 * {@code ERR unknown command 'fcall', with args beginning with: ...} (before Redis 7,
	 * or renamed away), a proxy's "unsupported command", or an ACL user without
	 * permission to run it.
	 */
	static boolean isFunctionsUnavailable(String error) {
		String lower = error.toLowerCase(Locale.ROOT);
		return lower.contains("unknown command") || lower.contains("unsupported command")
				|| (lower.startsWith("noperm") && lower.contains("fcall"));
	}

	/**
	 * Refused before running because a function may write, where a script would run (and
	 * fail at its first write, if it writes at all).
	 */
	static boolean isRefusedBeforeRunning(String error) {
		return REFUSED_BEFORE_RUNNING.stream().anyMatch(error::startsWith);
	}

	/**
	 * FUNCTION LOAD of a library that exists: {@code ERR Library 'NAME' already exists}.
	 */
	static boolean isAlreadyLoaded(@Nullable String error) {
		return error != null && error.toLowerCase(Locale.ROOT).endsWith("already exists");
	}

	/**
	 * FUNCTION LOAD failed for good: an {@code ERR} (no FUNCTION command, a library the
	 * server cannot compile or register) or {@code NOPERM} reply. Other codes
	 * ({@code OOM}, {@code LOADING}, {@code READONLY}, ...) pass.
	 */
	static boolean isPermanentLoadFailure(String error) {
		return error.startsWith("ERR") || error.startsWith("NOPERM");
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
			ScriptRunner.await(connection(deadline).commands.del(key), deadline, true);
		}
		catch (Exception ex) {
			failed(ex);
			throw ex;
		}
	}

	/**
	 * Connects, and loads the script and the function library, in the background.
	 */
	@Override
	public void warmUp() {
		this.libraryLoad = connection().thenCompose((connection) -> {
			connection.commands.scriptLoad(this.body);
			loadLibrary(connection.commands);
			return this.libraryLoad;
		});
	}

	@Override
	public CompletableFuture<?> libraryLoad() {
		return this.libraryLoad;
	}

	@Override
	public void close() {
		CompletableFuture<Native> current = this.connection.getAndSet(null);
		if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
			current.join().close();
		}
		this.connector.shutdownNow();
	}

	/**
	 * One asynchronous script call: each step sends the next command from the callback of
	 * the last, on whatever thread completed it, and none waits. Its result completes
	 * with the reply, the failure, or the deadline's {@link TimeoutException}.
	 */
	private final class PendingEval {

		/*
		 * Once the result is done (the deadline passed, or a failure), no command is sent
		 * any more, and the withdrawals are queued behind the last command sent, on its
		 * connection: Redis runs one connection's commands in order. A command sent while
		 * the result completed is followed by its withdrawals again (removing a member
		 * twice does nothing), so that they always come after it.
		 */

		final CompletableFuture<List<Object>> result = new CompletableFuture<>();

		private final byte[][] keys;

		private final byte[][] args;

		private final List<Withdrawal> withdrawals;

		/** The connection, set before the first command is sent on it. */
		private volatile @Nullable Native connection;

		/** The last command sent. */
		private volatile @Nullable RedisFuture<Object> sent;

		PendingEval(byte[][] keys, byte[][] args, List<Withdrawal> withdrawals) {
			this.keys = keys;
			this.args = args;
			this.withdrawals = withdrawals;
		}

		void connected(@Nullable Native connection, @Nullable Throwable failure) {
			step(() -> {
				if (failure != null || connection == null) {
					fail((failure != null) ? failure : new IllegalStateException("No connection to Redis"));
					return;
				}
				if (connection.isDown(connection.slotOf(this.keys))) {
					// Lettuce would hold the call until it reconnects: a caller of
					// a Redis (or a cluster's master) that is gone learns it now
					fail(new RedisConnectionFailureException("The connection to Redis is down"));
					return;
				}
				this.connection = connection;
				RedisClusterAsyncCommands<byte[], byte[]> commands = connection.commands;
				if (LettuceScriptRunner.this.functions.get() == Functions.UNSUPPORTED) {
					evalScript(commands);
					return;
				}
				send(true, () -> commands.fcall(LettuceScriptRunner.this.function, ScriptOutputType.MULTI, this.keys,
						this.args), (ex) -> {
							if (runsAsScriptInstead(ex, commands)) {
								evalScript(commands);
							}
							else {
								fail(ex);
							}
						});
			});
		}

		private void evalScript(RedisClusterAsyncCommands<byte[], byte[]> commands) {
			send(false,
					() -> commands.evalsha(LettuceScriptRunner.this.sha, ScriptOutputType.MULTI, this.keys, this.args),
					(ex) -> {
						if (!ScriptRunner.isNoScript(ex)) {
							fail(ex);
							return;
						}
						send(false, () -> commands.eval(LettuceScriptRunner.this.body, ScriptOutputType.MULTI,
								this.keys, this.args), this::fail);
					});
		}

		/**
		 * Sends a command unless the result is done, then answers with its reply or hands
		 * its failure on.
		 * @param function whether the command is the FCALL, whose answer tells that Redis
		 * runs the function
		 */
		private void send(boolean function, Supplier<RedisFuture<Object>> command, Consumer<Throwable> failed) {
			if (this.result.isDone()) {
				return;
			}
			RedisFuture<Object> sent = command.get();
			this.sent = sent;
			if (this.result.isDone()) {
				withdraw();
			}
			sent.whenComplete((reply, ex) -> step(() -> {
				if (ex == null) {
					if (function) {
						LettuceScriptRunner.this.functions.compareAndSet(Functions.UNKNOWN, Functions.SUPPORTED);
					}
					answer(reply);
				}
				else {
					failed.accept(ex);
				}
			}));
		}

		/**
		 * Runs a step of the call: one that throws (a client that refuses a command at
		 * once) fails the call then, rather than leave it to its deadline.
		 */
		private void step(Runnable step) {
			try {
				step.run();
			}
			catch (RuntimeException ex) {
				fail(ex);
			}
		}

		private void answer(@Nullable Object reply) {
			try {
				this.result.complete(ScriptRunner.asList(reply));
			}
			catch (IllegalStateException ex) {
				fail(ex);
			}
		}

		private void fail(Throwable ex) {
			this.result.completeExceptionally(unwrap(ex));
		}

		/**
		 * Once the result is done: after a failure or the deadline, the withdrawals
		 * follow the script, and a command still queued on a connection that is down is
		 * cancelled, so that it is not sent after a reconnection, long after its caller
		 * gave up.
		 */
		void ended(@Nullable List<Object> reply, @Nullable Throwable failure) {
			if (failure == null) {
				return;
			}
			withdraw();
			Native connection = this.connection;
			RedisFuture<Object> sent = this.sent;
			if (connection != null && sent != null && !connection.isUp(connection.slotOf(this.keys))) {
				sent.cancel(true);
			}
			failedWithoutWaiting(failure);
		}

		private void withdraw() {
			Native connection = this.connection;
			if (connection == null) {
				return;
			}
			for (Withdrawal withdrawal : this.withdrawals) {
				try {
					connection.commands.zrem(withdrawal.key(), withdrawal.member());
				}
				catch (RuntimeException ex) {
					// refused by the client: the lease lapses after its lease time
				}
			}
		}

	}

	/**
	 * Whether Redis runs the script's function: unknown until an FCALL or a FUNCTION LOAD
	 * answers, and unsupported for good once Redis says it has no functions.
	 */
	private enum Functions {

		UNKNOWN, SUPPORTED, UNSUPPORTED

	}

	/**
	 * The state of the connection to one master of a cluster.
	 */
	private enum NodeConnection {

		UP, OPENING, DOWN

	}

	/**
	 * A connection: its commands, its state, and what closes it (the connection itself,
	 * or the factory's connection it was borrowed from).
	 */
	private record Native(RedisClusterAsyncCommands<byte[], byte[]> commands,
			StatefulConnection<byte[], byte[]> stateful, AutoCloseable owner) {

		/*
		 * A cluster connection's isOpen() tells of one node only, the one it connected to
		 * first (its keyless commands go there); each master's slots go through a
		 * connection to that master, which Lettuce opens, and reconnects, by itself.
		 */

		/**
		 * Returns whether the connection is known to be up: a standalone connection's own
		 * state; in a cluster, that of the connection to the master that serves the slot,
		 * or for a slot of -1 whether any master's is. One still opening is not up yet: a
		 * call that timed out on it was not answered late.
		 */
		boolean isUp(int slot) {
			if (!(this.stateful instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)) {
				return this.stateful.isOpen();
			}
			if (isClosed(cluster)) {
				return false;
			}
			if (slot >= 0) {
				RedisClusterNode master = cluster.getPartitions().getMasterBySlot(slot);
				return master != null && state(cluster, master) == NodeConnection.UP;
			}
			for (RedisClusterNode node : cluster.getPartitions()) {
				if (isServing(node) && state(cluster, node) == NodeConnection.UP) {
					return true;
				}
			}
			return false;
		}

		/**
		 * Returns whether the connection is known to be down: a standalone connection's
		 * own state; in a cluster, that of the connection to the master that serves the
		 * slot, or for a slot of -1 whether every master's is. One still opening is not
		 * down: a call sent on it waits for it.
		 */
		boolean isDown(int slot) {
			if (!(this.stateful instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)) {
				return !this.stateful.isOpen();
			}
			if (isClosed(cluster)) {
				return true;
			}
			if (slot >= 0) {
				RedisClusterNode master = cluster.getPartitions().getMasterBySlot(slot);
				return master != null && state(cluster, master) == NodeConnection.DOWN;
			}
			boolean known = false;
			for (RedisClusterNode node : cluster.getPartitions()) {
				if (isServing(node)) {
					if (state(cluster, node) != NodeConnection.DOWN) {
						return false;
					}
					known = true;
				}
			}
			return known;
		}

		private static boolean isClosed(StatefulRedisClusterConnection<byte[], byte[]> cluster) {
			return cluster instanceof RedisChannelHandler<?, ?> handler && handler.isClosed();
		}

		private static boolean isServing(RedisClusterNode node) {
			return node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.hasNoSlots();
		}

		/**
		 * Returns the state of the connection Lettuce sends a master's slot writes on.
		 */
		private static NodeConnection state(StatefulRedisClusterConnection<byte[], byte[]> cluster,
				RedisClusterNode node) {
			RedisURI uri = node.getUri();
			CompletableFuture<StatefulRedisConnection<byte[], byte[]>> connection;
			try {
				connection = cluster.getConnectionAsync(uri.getHost(), uri.getPort());
			}
			catch (RuntimeException ex) {
				// a node the cluster does not know (any more): the call tells
				return NodeConnection.OPENING;
			}
			if (!connection.isDone()) {
				return NodeConnection.OPENING;
			}
			return (!connection.isCompletedExceptionally() && connection.join().isOpen()) ? NodeConnection.UP
					: NodeConnection.DOWN;
		}

		/**
		 * Returns the slot of a call's first key in a cluster (every key of a call shares
		 * it), or -1.
		 */
		int slotOf(byte[][] keys) {
			return (this.stateful instanceof StatefulRedisClusterConnection && keys.length > 0)
					? SlotHash.getSlot(keys[0]) : -1;
		}

		/**
		 * Returns the cluster's topology as last read, or {@code null} for no cluster.
		 */
		@Nullable Partitions partitions() {
			return (this.stateful instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)
					? cluster.getPartitions() : null;
		}

		void close() {
			try {
				this.owner.close();
			}
			catch (Exception ex) {
				// closing a connection that failed: nothing left to do
			}
		}

	}

}
