package dev.ratelimit.core.redis;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Runs the limiter's commands against Redis, each bounded by a deadline
 * ({@link System#nanoTime()} based). A call that misses its deadline throws
 * {@link TimeoutException}; the caller's thread never waits past the deadline. The
 * asynchronous forms never block the caller's thread at all: their futures complete with
 * the {@link TimeoutException} at the deadline.
 */
interface ScriptRunner extends AutoCloseable {

	/**
	 * Returns whether Redis is a cluster, so that keys of different slots need separate
	 * script calls.
	 */
	boolean isCluster(long deadline) throws Exception;

	/**
	 * Returns whether Redis is a cluster as {@link #isCluster(long)} does, without
	 * blocking the calling thread.
	 */
	CompletableFuture<Boolean> isClusterAsync(long deadline);

	/**
	 * Runs the script: as a Redis 7 function with FCALL where the runner supports it
	 * (Lettuce), else, and wherever the function cannot run, with EVALSHA, and with EVAL
	 * if Redis answers NOSCRIPT (which also caches the script again, after a restart or a
	 * failover); any retry runs within the same deadline. A call that misses the deadline
	 * while the connection is down is cancelled, so that a client that queues commands
	 * while disconnected does not send it later; one that misses it on a connection that
	 * is up may still run (see {@link #isConnected()}).
	 */
	default List<Object> eval(List<byte[]> keys, List<byte[]> args, long deadline) throws Exception {
		return eval(keys, args, deadline, List.of());
	}

	/**
	 * Runs the script as {@link #eval(List, List, long)} does; if the caller stops
	 * waiting for it (a timeout, an interrupt, a failure), the given members of sorted
	 * sets are removed once the script has run, should Redis still run it: the
	 * concurrency leases it would add, which nobody would otherwise release before their
	 * lease time. Removing a member the script never added does nothing. With Lettuce the
	 * removals follow the script on the same connection, and Redis runs one connection's
	 * commands in order; with other clients the worker that ran the script sends them
	 * right after it.
	 * @param withdrawals pairs of key and member, empty for none
	 */
	List<Object> eval(List<byte[]> keys, List<byte[]> args, long deadline, List<Withdrawal> withdrawals)
			throws Exception;

	/**
	 * A member of a sorted set to remove if its caller stops waiting for the script that
	 * adds it.
	 *
	 * @param key the key of the sorted set
	 * @param member the member
	 */
	record Withdrawal(byte[] key, byte[] member) {

	}

	/**
	 * Runs the script as {@link #eval(List, List, long, List)} does, without blocking the
	 * calling thread: the future completes with the reply, with the failure, or with a
	 * {@link TimeoutException} once the deadline passes. The same fallbacks run within
	 * the same deadline; a call that missed it sends nothing more, is cancelled if the
	 * connection is down, and has its withdrawals follow it, should Redis still run it.
	 * Whatever depends on the future runs on the thread that completes it: the client's
	 * (Lettuce's event loop, a worker of the pool) or the deadline's timer.
	 * @param withdrawals pairs of key and member, empty for none
	 */
	CompletableFuture<List<Object>> evalAsync(List<byte[]> keys, List<byte[]> args, long deadline,
			List<Withdrawal> withdrawals);

	/**
	 * Runs the script as {@link #eval} does, but without waiting (compensation), and
	 * without cancelling it.
	 */
	CompletableFuture<?> evalAsync(List<byte[]> keys, List<byte[]> args);

	/**
	 * Removes a member of a sorted set (a concurrency lease); not cancelled when nobody
	 * waits for it, so that a lease is released even if Redis answers late.
	 */
	CompletableFuture<?> removeMember(byte[] key, byte[] member);

	void delete(byte[] key, long deadline) throws Exception;

	/**
	 * Starts connecting and loads the script (and the function library, where functions
	 * are used) in the background, so that the first decision does not pay for it.
	 * Failures are ignored: the first call tries again.
	 */
	void warmUp();

	/**
	 * Returns the latest load of the function library (from {@link #warmUp} or after a
	 * call that missed the function), done once Redis has answered it; done at once for a
	 * runner without functions.
	 */
	default CompletableFuture<?> libraryLoad() {
		return CompletableFuture.completedFuture(null);
	}

	/**
	 * Returns whether the connection to Redis is up, as far as the runner knows: a call
	 * that times out on a connection that is up was answered late (Redis still runs it),
	 * not lost. A runner that cannot tell says {@code true}.
	 */
	default boolean isConnected() {
		return true;
	}

	/**
	 * Returns whether the connection to the master that serves a slot is up, as
	 * {@link #isConnected()} does for the whole of Redis: in a Redis Cluster each master
	 * has a connection of its own, and one master's lost connection says nothing of the
	 * others'. A runner that cannot tell a master's connection answers for the whole.
	 * @param slot the slot of the call's keys
	 */
	default boolean isConnected(int slot) {
		return isConnected();
	}

	/**
	 * Returns whether Redis is a cluster whose masters the runner tells apart: it knows
	 * which master serves each slot ({@link #nodeOf}) and the state of each master's
	 * connection ({@link #isConnected(int)}). Cheap: asked on every call.
	 */
	default boolean tellsMastersApart() {
		return false;
	}

	/**
	 * Returns the node id of the master that serves a slot, as the runner last read the
	 * cluster's topology; {@code null} when Redis is no cluster, or the runner does not
	 * know (a topology not read yet, a slot no master serves, a client that does not
	 * tell).
	 * @param slot the slot
	 */
	default @Nullable String nodeOf(int slot) {
		return null;
	}

	/**
	 * Returns the masters of a Redis Cluster that serve slots, as the runner last read
	 * the topology; empty when Redis is no cluster, or the runner does not know.
	 */
	default List<Master> masters() {
		return List.of();
	}

	/**
	 * A master of a Redis Cluster and the slots it serves.
	 *
	 * @param nodeId the node's id in the cluster
	 * @param slots the slots it serves, as ranges such as {@code 0-5460,10923}
	 * @param slotCount how many slots it serves
	 */
	record Master(String nodeId, String slots, int slotCount) {

	}

	/**
	 * Replaces a connection that is closed by a new one, at once, rather than waiting for
	 * the client's own reconnection; called by the limiter's checks while Redis is down.
	 * A runner that opens a connection per call does nothing.
	 */
	default void reconnectIfClosed() {
	}

	@Override
	void close();

	static ScriptRunner of(RedisConnectionFactory connectionFactory, DecideScript script) {
		if (ClassUtils.isPresent("io.lettuce.core.RedisClient", ScriptRunner.class.getClassLoader())
				&& LettuceScriptRunner.supports(connectionFactory)) {
			return new LettuceScriptRunner(connectionFactory, script);
		}
		if (ClassUtils.isPresent("redis.clients.jedis.Jedis", ScriptRunner.class.getClassLoader())
				&& JedisScriptRunner.supports(connectionFactory)) {
			return new JedisScriptRunner(connectionFactory, script);
		}
		return new ConnectionScriptRunner(connectionFactory, script.script());
	}

	/**
	 * Waits for a result until the deadline.
	 * @param cancel whether to cancel the work when the deadline passes or the waiting
	 * thread is interrupted
	 * @throws InterruptedException if the waiting thread is interrupted (its flag is set
	 * again); Redis did not fail
	 */
	static <T> T await(Future<T> future, long deadline, boolean cancel) throws Exception {
		return await(future, deadline, cancel, cancel);
	}

	/**
	 * Waits for a result until the deadline.
	 * @param cancelOnTimeout whether to cancel the work when the deadline passes
	 * @param cancelOnInterrupt whether to cancel the work when the waiting thread is
	 * interrupted
	 * @throws InterruptedException if the waiting thread is interrupted (its flag is set
	 * again); Redis did not fail
	 */
	static <T> T await(Future<T> future, long deadline, boolean cancelOnTimeout, boolean cancelOnInterrupt)
			throws Exception {
		try {
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0 && !future.isDone()) {
				throw new TimeoutException();
			}
			return future.get(Math.max(remaining, 0), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			if (cancelOnTimeout && !future.cancel(true) && future.isDone() && !future.isCancelled()) {
				// answered between the timeout and the cancel: the answer is the
				// caller's, and nobody else's
				return await(future, System.nanoTime(), false);
			}
			throw new TimeoutException("Redis did not answer in time");
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause instanceof Exception exception) {
				throw exception;
			}
			throw ex;
		}
		catch (CancellationException ex) {
			throw new TimeoutException("Redis command cancelled");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			if (cancelOnInterrupt && !future.cancel(true) && future.isDone() && !future.isCancelled()) {
				// answered as the caller was interrupted: the answer is the caller's, and
				// nobody else's
				return await(future, System.nanoTime(), false);
			}
			throw ex;
		}
	}

	/**
	 * Throws if the deadline has passed, before a command is sent that its caller would
	 * not wait for.
	 */
	static void checkDeadline(long deadline) throws TimeoutException {
		if (deadline - System.nanoTime() <= 0) {
			throw new TimeoutException("Redis did not answer in time");
		}
	}

	static boolean isNoScript(Throwable ex) {
		for (Throwable current = ex; current != null; current = current.getCause()) {
			String message = current.getMessage();
			if (message != null && message.contains("NOSCRIPT")) {
				return true;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return false;
	}

	@SuppressWarnings("unchecked")
	static List<Object> asList(Object result) {
		if (result instanceof List<?> list) {
			return (List<Object>) list;
		}
		throw new IllegalStateException("Expected a list from the rate-limit script, got " + result);
	}

}
