package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.failure.BackendState;
import dev.ratelimit.core.failure.FailurePolicyRateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * A {@link RateLimiter} that keeps every key's state in Redis, so that all instances of
 * an application share one quota: one script call per hash slot decides every limit of a
 * call, and a {@link FailurePolicyRateLimiter failure policy} decides while Redis is late
 * or down. docs/REDIS.md and docs/ARCHITECTURE.md say how.
 */
public final class RedisRateLimiter implements RateLimiter, AutoCloseable {

	/** The policy of the key that {@link #ping()} writes; no call uses it. */
	static final String HEALTH_POLICY = "ratelimit-health";

	/**
	 * Most calls sent without waiting (while Redis answers late), or lease renewals, that
	 * Redis has not answered yet.
	 */
	static final int MAX_UNANSWERED = 1024;

	/**
	 * Health writes made by {@link #awaitReady} once Redis answers, so that the first
	 * calls find the code compiled (spread over the masters of a cluster).
	 */
	private static final int WARM_UP_WRITES = 200;

	private final RedisBackend backend;

	private final FailurePolicyRateLimiter policy;

	private RedisRateLimiter(Builder builder) {
		this.backend = new RedisBackend(builder);
		FailurePolicyRateLimiter.Builder policy = FailurePolicyRateLimiter.builder(this.backend)
			.failureMode(builder.failureMode)
			.coolDown(builder.coolDown)
			.recoveryCheckInterval(builder.recoveryCheckInterval)
			.failureListener(builder.failureListener)
			.timeSource((builder.timeSource != null) ? builder.timeSource : TimeSource.system())
			.threadName("ratelimit-redis-recovery");
		if (builder.localFallback != null) {
			policy.localFallback(builder.localFallback);
		}
		this.policy = policy.build();
	}

	/**
	 * Starts a limiter that works through the given connection factory (standalone,
	 * Sentinel or Cluster; Lettuce or Jedis).
	 * @param connectionFactory the connection factory
	 * @return a builder
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(Objects.requireNonNull(connectionFactory, "connectionFactory must not be null"));
	}

	/**
	 * Returns whether Redis is usable: not down since an error or a lost connection (it
	 * may answer late); {@code true} before the first call. For a Redis Cluster, whether
	 * no master is down.
	 * @return the last known reachability
	 */
	public boolean isAvailable() {
		return this.policy.isAvailable();
	}

	/**
	 * Returns what the failure policy knows of Redis: it decides calls, it answers late
	 * (calls are decided by this instance's limits, or refused under {@code deny}), or it
	 * is down (the failure mode decides). For a Redis Cluster, the worst state of any
	 * master: {@link #clusterMasters()} tells each.
	 * @return the state
	 */
	public BackendState state() {
		return this.policy.state();
	}

	/**
	 * Returns each master of a Redis Cluster that serves slots, as the limiter last read
	 * the topology, with what the failure policy knows of it: each master is judged on
	 * its own, so that one master late or down leaves the calls of the others to Redis.
	 * Empty for a standalone or Sentinel Redis, before the topology is read, and with
	 * Jedis (whose runner judges a cluster as a whole, see {@link #state()}).
	 * @return the masters, in the topology's order
	 */
	public List<ClusterMaster> clusterMasters() {
		List<ScriptRunner.Master> masters = this.backend.masters();
		List<ClusterMaster> states = new ArrayList<>(masters.size());
		for (ScriptRunner.Master master : masters) {
			states.add(new ClusterMaster(master.nodeId(), master.slots(), master.slotCount(),
					this.policy.state(master.nodeId())));
		}
		return states;
	}

	/**
	 * Returns what this limiter does when Redis fails.
	 * @return the failure mode
	 */
	public FailureMode failureMode() {
		return this.policy.failureMode();
	}

	/**
	 * Waits until this limiter decides calls in Redis: connected, the script loaded, and
	 * a write to Redis made, for at most {@code timeout}; a few more writes then warm up
	 * the decision path. Meant for start-up, before an application reports itself ready,
	 * so that its first burst of calls does not meet a connection still opening. It gives
	 * up at once when Redis refuses (not reachable, or it refuses the write): the failure
	 * mode then decides calls until a background check finds Redis working.
	 * @param timeout the longest wait
	 * @return whether Redis took a write in time
	 */
	public boolean awaitReady(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		awaitLibraryLoad(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
		while (true) {
			try {
				ping();
				break;
			}
			catch (QueryTimeoutException ex) {
				// a cold JVM or a connection still opening: try again while there is time
				if (Thread.currentThread().isInterrupted() || deadline - System.nanoTime() <= 0) {
					return false;
				}
			}
			catch (RuntimeException ex) {
				return false;
			}
		}
		// a ping writes to every master of a cluster
		int pings = WARM_UP_WRITES / Math.max(1, this.backend.parts().size());
		for (int i = 0; i < pings && deadline - System.nanoTime() > 0; i++) {
			try {
				ping();
			}
			catch (RuntimeException ex) {
				break;
			}
		}
		return true;
	}

	/**
	 * Checks that Redis decides a call within the timeout, with a real decision that
	 * writes one key no call uses ({@value #HEALTH_POLICY}), which expires a millisecond
	 * later. A Redis that answers {@code PING}, or runs a script that only reads, may
	 * still refuse every decision: a user whose ACL lacks {@code FCALL} or
	 * {@code EVALSHA}, a server over {@code maxmemory} with {@code noeviction}, a replica
	 * after a failover. Each refuses this write as it refuses decisions. A late answer
	 * starts a late state, any other failure a down one; a successful write ends a down
	 * state, but not the cool-down of a late one, which only the limiter's own probe ends
	 * once it has passed.
	 * @throws DataAccessResourceFailureException or {@link QueryTimeoutException} if it
	 * does not
	 */
	public void ping() {
		try {
			this.policy.check();
		}
		catch (RuntimeException ex) {
			throw this.backend.backendException("ping Redis", ex);
		}
	}

	/**
	 * Decides a call in Redis; never throws for a failure of Redis, which the failure
	 * policy decides instead.
	 */
	@Override
	public Decision acquire(List<KeyedLimit> limits, long cost) {
		return this.policy.acquire(limits, cost);
	}

	/**
	 * Decides a call in Redis without blocking the calling thread, so that a reactive
	 * application decides on its event loop: the script goes through the client's
	 * asynchronous API, and the answer, or the failure policy's decision once the timeout
	 * has passed, completes the future on the client's thread (Lettuce's event loop) or
	 * on the limiter's timer. Stages chained on the future run there and must not block.
	 * Never fails for a failure of Redis, which the failure policy decides instead.
	 */
	@Override
	public CompletableFuture<Decision> acquireAsync(List<KeyedLimit> limits, long cost) {
		return this.policy.acquireAsync(limits, cost);
	}

	/**
	 * Returns each limit's state in Redis without consuming anything.
	 * @throws DataAccessResourceFailureException or {@link QueryTimeoutException} if
	 * Redis fails
	 */
	@Override
	public List<LimitStatus> inspect(List<KeyedLimit> limits) {
		return this.policy.inspect(limits);
	}

	/**
	 * Gives back permits of an allowed decision, where it was decided: in Redis (or the
	 * two-tier reservoirs) and in this instance's own limits, which counted the call too;
	 * nothing is sent to Redis while it is down.
	 */
	@Override
	public void refund(Decision decision, List<KeyedLimit> limits, long cost) {
		this.policy.refund(decision, limits, cost);
	}

	/**
	 * Gives back permits of an allowed decision as {@link #refund} does, without blocking
	 * the calling thread.
	 */
	@Override
	public CompletableFuture<Void> refundAsync(Decision decision, List<KeyedLimit> limits, long cost) {
		return this.policy.refundAsync(decision, limits, cost);
	}

	/**
	 * Gives back the concurrency permits of an allowed decision. A failure is reported to
	 * the failure listener, never thrown; the permit then lapses after its lease time.
	 */
	@Override
	public void release(Decision decision) {
		this.policy.release(decision);
	}

	/**
	 * Gives back the concurrency permits of an allowed decision without blocking the
	 * calling thread: the future completes once Redis has answered the removals, or the
	 * timeout has passed. A failure is reported to the failure listener, never thrown.
	 */
	@Override
	public CompletableFuture<Void> releaseAsync(Decision decision) {
		return this.policy.releaseAsync(decision);
	}

	/**
	 * Renews the concurrency leases of an allowed decision whose call is still in flight,
	 * without waiting, and the permits this instance's own limits hold for it.
	 */
	@Override
	public void renew(Decision decision) {
		this.policy.renew(decision);
	}

	/**
	 * Deletes a keyed limit's state in Redis (and its permit reservoir and local fallback
	 * state).
	 * @throws DataAccessResourceFailureException or {@link QueryTimeoutException} if
	 * Redis fails
	 */
	@Override
	public void reset(KeyedLimit limit) {
		this.policy.reset(limit);
	}

	/**
	 * Deletes the state of every keyed limit: every key of this limiter's prefix in Redis
	 * (on every master of a cluster, with {@code SCAN} and {@code UNLINK}), its permit
	 * reservoirs and its own in-memory limits. For tests: it waits for Redis as long as
	 * the scan takes, and other limiters that share the prefix lose their state too.
	 * @throws DataAccessResourceFailureException if Redis fails
	 */
	@Override
	public void resetAll() {
		this.policy.resetAll();
	}

	/**
	 * Releases this limiter's threads and its connection (the connection factory stays
	 * open).
	 */
	@Override
	public void close() {
		this.policy.close();
		this.backend.close();
	}

	/**
	 * Returns the permit reservoir of a limit, in two-tier mode; for tests.
	 */
	PermitReservoirs.Reservoir reservoir(KeyedLimit target) {
		return this.backend.reservoir(target);
	}

	/**
	 * Waits until the latest load of the function library has been answered (or has
	 * failed), for at most {@code timeout}.
	 * @param timeout the longest wait
	 */
	void awaitLibraryLoad(Duration timeout) {
		this.backend.awaitLibraryLoad(timeout);
	}

	/**
	 * Waits until the give-backs sent so far have been answered (or have failed), for at
	 * most {@code timeout}.
	 * @param timeout the longest wait
	 * @return whether none is still on its way
	 */
	boolean awaitCompensations(Duration timeout) {
		return this.backend.awaitCompensations(timeout);
	}

	/**
	 * A master of a Redis Cluster as the limiter sees it.
	 *
	 * @param nodeId the node's id in the cluster ({@code CLUSTER MYID})
	 * @param slots the slots it serves, as ranges such as {@code 0-5460,10923}
	 * @param slotCount how many slots it serves
	 * @param state what the failure policy knows of it
	 */
	public record ClusterMaster(String nodeId, String slots, int slotCount, BackendState state) {

	}

	/**
	 * Builds a {@link RedisRateLimiter}; every value is checked when it is set.
	 */
	public static final class Builder {

		final RedisConnectionFactory connectionFactory;

		String keyPrefix = "rl";

		Duration timeout = Duration.ofMillis(100);

		FailureMode failureMode = FailureMode.ALLOW;

		@Nullable RateLimiter localFallback;

		Duration coolDown = Duration.ofSeconds(1);

		Duration recoveryCheckInterval = Duration.ofMillis(200);

		long reservoir;

		Consumer<Throwable> failureListener = (ex) -> {
		};

		@Nullable TimeSource timeSource;

		@Nullable TimeSource scriptTimeSource;

		private Builder(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
		}

		/**
		 * Sets the text every key starts with; default {@code rl}.
		 * @param prefix the prefix, without braces or whitespace
		 * @return this builder
		 * @throws InvalidRedisSettingException for {@link RedisSetting#KEY_PREFIX} if the
		 * value is wrong
		 */
		public Builder keyPrefix(String prefix) {
			this.keyPrefix = RedisSetting.checkKeyPrefix(prefix);
			return this;
		}

		/**
		 * Sets the longest a decision waits for Redis before it counts as a failure;
		 * default 100ms.
		 * @param timeout the timeout, positive
		 * @return this builder
		 * @throws InvalidRedisSettingException for {@link RedisSetting#TIMEOUT} if the
		 * value is wrong
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = RedisSetting.checkTimeout(timeout);
			return this;
		}

		/**
		 * Sets what happens to a call when Redis fails; default
		 * {@link FailureMode#ALLOW}.
		 * @param failureMode the failure mode
		 * @return this builder
		 */
		public Builder failureMode(FailureMode failureMode) {
			this.failureMode = Objects.requireNonNull(failureMode, "failureMode must not be null");
			return this;
		}

		/**
		 * Sets this instance's own limiter: it decides calls that Redis answers late
		 * (unless the failure mode is {@link FailureMode#DENY}, which refuses them), and
		 * every call while Redis is down in {@link FailureMode#LOCAL}; every call Redis
		 * allows is charged to it too. Default: a new {@link InMemoryRateLimiter} (none
		 * in {@link FailureMode#DENY}).
		 * @param localFallback the local limiter
		 * @return this builder
		 */
		public Builder localFallback(RateLimiter localFallback) {
			this.localFallback = Objects.requireNonNull(localFallback, "localFallback must not be null");
			return this;
		}

		/**
		 * Sets how long calls are decided by this instance, without waiting for Redis,
		 * after Redis answered a call later than the timeout; then one call waits for
		 * Redis again, and an answer in time ends it. Default 1s, long enough that
		 * slowness costs one timeout per second instead of one per call.
		 * @param coolDown the cool-down, zero or positive
		 * @return this builder
		 * @throws InvalidRedisSettingException for {@link RedisSetting#COOL_DOWN} if the
		 * value is wrong
		 */
		public Builder coolDown(Duration coolDown) {
			this.coolDown = RedisSetting.checkCoolDown(coolDown);
			return this;
		}

		/**
		 * Sets how often a Redis that is down (an error, a lost connection) is checked,
		 * with a new connection if the old one is closed and a real write: the first
		 * success brings calls back to Redis. A Redis that answers late gets its
		 * connection checked as often (and, in a cluster, its topology read again).
		 * Default 200ms.
		 * @param interval the interval, positive
		 * @return this builder
		 * @throws InvalidRedisSettingException for
		 * {@link RedisSetting#RECOVERY_CHECK_INTERVAL} if the value is wrong
		 */
		public Builder recoveryCheckInterval(Duration interval) {
			this.recoveryCheckInterval = RedisSetting.checkRecoveryCheckInterval(interval);
			return this;
		}

		/**
		 * Sets the permits a token bucket takes from Redis per call into this instance's
		 * reservoir in two-tier mode; 0 (the default) turns it off.
		 * @param size the reservoir size, 0 or more
		 * @return this builder
		 * @throws InvalidRedisSettingException for {@link RedisSetting#RESERVOIR} if the
		 * value is wrong
		 */
		public Builder reservoir(long size) {
			this.reservoir = RedisSetting.checkReservoir(size);
			return this;
		}

		/**
		 * Sets the reservoir size of two-tier mode.
		 * @param lease the reservoir size, 0 or more
		 * @return this builder
		 * @throws InvalidRedisSettingException for {@link RedisSetting#RESERVOIR} if the
		 * value is wrong
		 * @deprecated use {@link #reservoir(long)}: "lease" names concurrency permits
		 */
		@Deprecated
		public Builder lease(long lease) {
			return reservoir(lease);
		}

		/**
		 * Sets the callback told of every failed Redis call, for metrics.
		 * @param failureListener the listener
		 * @return this builder
		 */
		public Builder failureListener(Consumer<Throwable> failureListener) {
			this.failureListener = Objects.requireNonNull(failureListener, "failureListener must not be null");
			return this;
		}

		/**
		 * For tests only: makes the script use this clock instead of Redis {@code TIME}.
		 * Keys then live at least an hour, as the clock's durations mean nothing to
		 * Redis.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * For tests only: gives the script a clock of its own, as Redis has, instead of
		 * {@link #timeSource}'s (which the limiter still reads for its own decisions), so
		 * that a test can have Redis run a call later than the limiter sent it.
		 * @param scriptTimeSource the script's clock
		 * @return this builder
		 */
		Builder scriptTimeSource(TimeSource scriptTimeSource) {
			this.scriptTimeSource = Objects.requireNonNull(scriptTimeSource, "scriptTimeSource must not be null");
			return this;
		}

		/**
		 * Builds the limiter, which starts connecting and loading its script in the
		 * background (a failure there is ignored, and retried by the first call).
		 * @return the limiter
		 */
		public RedisRateLimiter build() {
			return new RedisRateLimiter(this);
		}

	}

}
