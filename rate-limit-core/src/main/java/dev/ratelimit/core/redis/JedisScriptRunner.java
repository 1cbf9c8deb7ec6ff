package dev.ratelimit.core.redis;

import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

/**
 * Runs the limiter's synchronous script calls on the caller's own thread, over blocking
 * Jedis connections of its own (to the factory's standalone server, with its settings),
 * each read bounded by the call's deadline; every other call goes through a
 * {@link ConnectionScriptRunner} on the factory. The script runs as a Redis 7 function,
 * else with EVALSHA.
 */
final class JedisScriptRunner implements ScriptRunner {

	/*
	 * Why the caller's thread: a call handed to another thread (a worker, or Lettuce's
	 * event loop) costs two thread wake-ups more than one that the caller sends and reads
	 * itself, which on a loaded machine cost more CPU than the rest of the decision
	 * (docs/BENCHMARKS.md, "CPU per Redis decision").
	 *
	 * Deadlines: a caller takes an idle connection without waiting (none idle: the call
	 * goes to the workers, and one more connection opens in the background, on the
	 * connector's thread, so that opening one never holds a caller), sends nothing once
	 * less than a millisecond is left, and reads with the socket's timeout set to what is
	 * left. A connection whose read timed out, or failed, is closed: its reply may still
	 * come. Calls that carry withdrawals go to the workers, which wait out a late reply
	 * and withdraw after it on the same connection; so does a caller whose thread is
	 * interrupted, which then stops waiting at once.
	 */

	private static final Log logger = LogFactory.getLog(JedisScriptRunner.class);

	/** Most connections of this runner's own, idle or in use. */
	static final int MAX_CONNECTIONS = ConnectionScriptRunner.MAX_WORKERS;

	private final ConnectionScriptRunner others;

	private final HostAndPort address;

	private final DefaultJedisClientConfig clientConfig;

	private final byte[] sha;

	private final byte[] body;

	private final byte[] function;

	private final String library;

	private final Deque<Jedis> idle = new ConcurrentLinkedDeque<>();

	private final AtomicInteger opened = new AtomicInteger();

	private final AtomicBoolean opening = new AtomicBoolean();

	private final AtomicBoolean loading = new AtomicBoolean();

	/** The latest load of the library, done once it has been answered (or has failed). */
	private volatile CompletableFuture<?> libraryLoad = CompletableFuture.completedFuture(null);

	/** Whether Redis refused FCALL for good (before Redis 7, renamed, no permission). */
	private volatile boolean functionsUnavailable;

	private volatile boolean closed;

	private final ExecutorService connector = Executors.newSingleThreadExecutor((task) -> {
		Thread thread = new Thread(task, "ratelimit-redis-connect");
		thread.setDaemon(true);
		return thread;
	});

	JedisScriptRunner(RedisConnectionFactory connectionFactory, DecideScript script) {
		JedisConnectionFactory jedis = (JedisConnectionFactory) connectionFactory;
		this.others = new ConnectionScriptRunner(connectionFactory, script.script());
		RedisStandaloneConfiguration standalone = jedis.getStandaloneConfiguration();
		this.address = new HostAndPort(standalone.getHostName(), standalone.getPort());
		this.clientConfig = clientConfig(standalone, jedis.getClientConfiguration());
		this.sha = script.script().getSha1().getBytes(StandardCharsets.UTF_8);
		this.body = script.script().getScriptAsString().getBytes(StandardCharsets.UTF_8);
		this.function = script.functionName().getBytes(StandardCharsets.UTF_8);
		this.library = script.library();
	}

	/**
	 * Returns whether the factory is Jedis's, for a standalone server: Sentinel and
	 * Cluster keep the factory's own connections.
	 */
	static boolean supports(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof JedisConnectionFactory jedis && !jedis.isRedisSentinelAware()
				&& !jedis.isRedisClusterAware() && jedis.getStandaloneConfiguration() != null;
	}

	/** The settings the factory's own connections are made with. */
	private static DefaultJedisClientConfig clientConfig(RedisStandaloneConfiguration standalone,
			JedisClientConfiguration client) {
		DefaultJedisClientConfig.Builder builder = DefaultJedisClientConfig.builder()
			.connectionTimeoutMillis(Math.toIntExact(client.getConnectTimeout().toMillis()))
			.socketTimeoutMillis(Math.toIntExact(client.getReadTimeout().toMillis()))
			.database(standalone.getDatabase())
			.user(standalone.getUsername())
			.password(standalone.getPassword().toOptional().map(String::new).orElse(null))
			.clientName(client.getClientName().orElse(null))
			.ssl(client.isUseSsl());
		client.getSslSocketFactory().ifPresent(builder::sslSocketFactory);
		client.getSslParameters().ifPresent(builder::sslParameters);
		client.getHostnameVerifier().ifPresent(builder::hostnameVerifier);
		client.getCustomizer().ifPresent((customizer) -> customizer.customize(builder));
		return builder.build();
	}

	@Override
	public boolean isCluster(long deadline) {
		return false;
	}

	@Override
	public CompletableFuture<Boolean> isClusterAsync(long deadline) {
		return CompletableFuture.completedFuture(false);
	}

	@Override
	public List<Object> eval(List<byte[]> keys, List<byte[]> args, long deadline, List<Withdrawal> withdrawals)
			throws Exception {
		Jedis jedis = withdrawals.isEmpty() && !Thread.currentThread().isInterrupted() ? this.idle.pollFirst() : null;
		if (jedis == null) {
			if (withdrawals.isEmpty()) {
				openInBackground();
			}
			return this.others.eval(keys, args, deadline, withdrawals);
		}
		boolean healthy = false;
		try {
			List<Object> reply = run(jedis, keys, args, deadline);
			healthy = true;
			return reply;
		}
		catch (JedisDataException ex) {
			// an error reply: the connection has read it and is fine
			healthy = !jedis.getConnection().isBroken();
			throw ex;
		}
		catch (JedisConnectionException ex) {
			if (hasCause(ex, SocketTimeoutException.class)) {
				throw new TimeoutException("Redis did not answer in time");
			}
			// a lost server: the idle connections are most likely lost too
			closeIdle();
			throw new RedisConnectionFailureException("Redis call failed: " + ex.getMessage(), ex);
		}
		finally {
			giveBack(jedis, healthy);
		}
	}

	/**
	 * Runs the script on a connection, as a function where Redis runs it, else with
	 * EVALSHA (EVAL after NOSCRIPT), each command bounded by what is left of the
	 * deadline.
	 */
	private List<Object> run(Jedis jedis, List<byte[]> keys, List<byte[]> args, long deadline) throws Exception {
		if (!this.functionsUnavailable) {
			try {
				bound(jedis, deadline);
				return ScriptRunner.asList(jedis.fcall(this.function, keys, args));
			}
			catch (JedisDataException ex) {
				if (!runsAsScriptInstead(ex.getMessage())) {
					throw ex;
				}
			}
		}
		try {
			bound(jedis, deadline);
			return ScriptRunner.asList(jedis.evalsha(this.sha, keys, args));
		}
		catch (JedisDataException ex) {
			if (!ScriptRunner.isNoScript(ex)) {
				throw ex;
			}
			bound(jedis, deadline);
			return ScriptRunner.asList(jedis.eval(this.body, keys, args));
		}
	}

	/**
	 * Sets the connection's read timeout to what is left of the deadline, in whole
	 * milliseconds; throws, sending nothing, if less than one is left.
	 */
	private static void bound(Jedis jedis, long deadline) throws TimeoutException {
		long millis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
		if (millis < 1) {
			throw new TimeoutException("Redis did not answer in time");
		}
		jedis.getConnection().setSoTimeout((int) Math.min(millis, Integer.MAX_VALUE));
	}

	/**
	 * Returns whether a call that FCALL failed runs as a script instead, having noted
	 * what the failure tells (as {@link LettuceScriptRunner} does).
	 */
	private boolean runsAsScriptInstead(@Nullable String error) {
		if (error == null) {
			return false;
		}
		if (LettuceScriptRunner.isFunctionMissing(error)) {
			loadLibraryInBackground();
			return true;
		}
		if (LettuceScriptRunner.isFunctionsUnavailable(error)) {
			unavailable(error);
			return true;
		}
		return LettuceScriptRunner.isRefusedBeforeRunning(error);
	}

	private void unavailable(String error) {
		if (!this.functionsUnavailable) {
			this.functionsUnavailable = true;
			if (logger.isInfoEnabled()) {
				logger.info("Redis does not run the rate limiter's function library (" + error
						+ "); running its script with EVALSHA instead");
			}
		}
	}

	/**
	 * Loads the function library on the connector's thread, unless a load is on its way.
	 */
	private void loadLibraryInBackground() {
		if (this.functionsUnavailable || !this.loading.compareAndSet(false, true)) {
			return;
		}
		CompletableFuture<Void> loaded = new CompletableFuture<>();
		this.libraryLoad = loaded;
		try {
			this.connector.execute(() -> {
				try (Jedis jedis = new Jedis(this.address, this.clientConfig)) {
					jedis.functionLoad(this.library);
				}
				catch (JedisDataException ex) {
					String error = (ex.getMessage() != null) ? ex.getMessage() : "";
					if (!LettuceScriptRunner.isAlreadyLoaded(error)
							&& LettuceScriptRunner.isPermanentLoadFailure(error)) {
						unavailable(error);
					}
				}
				catch (RuntimeException ex) {
					// the next call that misses the function tries again
				}
				finally {
					this.loading.set(false);
					loaded.complete(null);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.loading.set(false);
			loaded.complete(null);
		}
	}

	/**
	 * Opens one more connection on the connector's thread, unless one is opening or there
	 * are as many as allowed.
	 */
	private void openInBackground() {
		if (this.closed || this.opened.get() >= MAX_CONNECTIONS || !this.opening.compareAndSet(false, true)) {
			return;
		}
		try {
			this.connector.execute(() -> {
				try {
					if (this.opened.incrementAndGet() > MAX_CONNECTIONS) {
						this.opened.decrementAndGet();
						return;
					}
					Jedis jedis;
					try {
						jedis = new Jedis(this.address, this.clientConfig);
						jedis.getConnection().connect();
					}
					catch (RuntimeException ex) {
						this.opened.decrementAndGet();
						return;
					}
					giveBack(jedis, true);
				}
				finally {
					this.opening.set(false);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.opening.set(false);
		}
	}

	private void giveBack(Jedis jedis, boolean healthy) {
		if (healthy && !this.closed) {
			this.idle.offerFirst(jedis);
			if (this.closed && this.idle.remove(jedis)) {
				close(jedis);
			}
			return;
		}
		close(jedis);
	}

	private void closeIdle() {
		for (Jedis jedis = this.idle.pollFirst(); jedis != null; jedis = this.idle.pollFirst()) {
			close(jedis);
		}
	}

	/**
	 * Closes the idle connections, which a server that went down has closed too, so that
	 * the limiter's check finds a new one rather than each of the old ones failing in
	 * turn.
	 */
	@Override
	public void reconnectIfClosed() {
		closeIdle();
		this.others.reconnectIfClosed();
	}

	private void close(Jedis jedis) {
		this.opened.decrementAndGet();
		try {
			jedis.close();
		}
		catch (RuntimeException ex) {
			// closing a connection that failed: nothing left to do
		}
	}

	private static boolean hasCause(Throwable ex, Class<? extends Throwable> type) {
		for (Throwable current = ex; current != null; current = current.getCause()) {
			if (type.isInstance(current)) {
				return true;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return false;
	}

	@Override
	public CompletableFuture<List<Object>> evalAsync(List<byte[]> keys, List<byte[]> args, long deadline,
			List<Withdrawal> withdrawals) {
		return this.others.evalAsync(keys, args, deadline, withdrawals);
	}

	@Override
	public CompletableFuture<?> evalAsync(List<byte[]> keys, List<byte[]> args) {
		return this.others.evalAsync(keys, args);
	}

	@Override
	public CompletableFuture<?> removeMember(byte[] key, byte[] member) {
		return this.others.removeMember(key, member);
	}

	@Override
	public void delete(byte[] key, long deadline) throws Exception {
		this.others.delete(key, deadline);
	}

	/**
	 * Loads the script and the function library, and opens a first connection, in the
	 * background.
	 */
	@Override
	public void warmUp() {
		this.others.warmUp();
		loadLibraryInBackground();
		openInBackground();
	}

	@Override
	public CompletableFuture<?> libraryLoad() {
		return this.libraryLoad;
	}

	@Override
	public void close() {
		this.closed = true;
		this.connector.shutdownNow();
		closeIdle();
		this.others.close();
	}

}
