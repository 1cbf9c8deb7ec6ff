package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Lease;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A {@link RateLimiter} that keeps every key's state in Redis, so that all instances of
 * an application share one quota.
 *
 * <h2>One round trip, decided on the server</h2> Every limit of a call is decided by one
 * Lua script ({@code decide.lua}) that first evaluates every limit and then, only if all
 * allow, applies them: a rejected call changes nothing. With Lettuce on Redis 7 or later
 * it runs as a function (its library loaded once with FUNCTION LOAD, named after the
 * script's SHA-1 so that versions coexist, then called with FCALL), which spares Redis
 * rebuilding the script's helpers on every call. Otherwise it runs with EVALSHA, and with
 * EVAL after a NOSCRIPT answer; so does a call that finds the library missing on its
 * server (which then gets it in the background). Both forms give the same answers and
 * write the same keys. The script is a line-by-line port of the Java math in
 * {@code dev.ratelimit.core.algorithm}, exact in Lua's doubles because every value stays
 * below 2<sup>53</sup>, and it reads the time from Redis {@code TIME} in microseconds, so
 * application clocks never matter. Each key gets a time to live equal to the time until
 * its state would be indistinguishable from a fresh one, so idle clients leave nothing
 * behind. Keys are named by {@code prefix:{policy:HASH}:fingerprint} (see
 * {@code RedisKeys}): the client key is hashed, and the configuration is part of the
 * name, never of the state.
 *
 * <h2>Redis Cluster</h2> The limits of one policy and client share a hash slot. A call
 * whose limits live in several slots (a per-client limit and a global one) is decided by
 * one script call per slot, in order; if a later slot rejects, what the earlier slots
 * took is given back by a compensating call of the same script. The residual window:
 * between the take and the give-back (one round trip) other callers see those permits as
 * used, so they may be rejected when they would not have been; if this instance dies or
 * loses Redis in that window, or the give-back fails, the permits stay taken until they
 * refill or expire. A limit is never over-admitted by this.
 *
 * <h2>Failure policy</h2> Every decision waits at most {@link Builder#timeout(Duration)
 * timeout} for Redis (the Lettuce path uses the asynchronous API on a connection of its
 * own; other clients run on a bounded worker pool while the caller waits no longer than
 * the timeout; in two-tier mode a call may first wait up to the timeout for another
 * thread's renewal of the same key). Redis failing and Redis answering late are told
 * apart:
 * <ul>
 * <li><b>Late</b> (no answer by the deadline while the connection is up): Redis still
 * runs the call, and this instance may itself be the slow part (a busy CPU reads answers
 * late), so the call is never let through unlimited. It is decided by this instance's own
 * limits ({@link Builder#localFallback(RateLimiter)}), which every call Redis allowed was
 * also charged to, or refused in {@link FailureMode#DENY}. For a
 * {@link Builder#coolDown(Duration) cool-down} calls are then decided the same way at
 * once and sent to Redis without waiting (so that Redis still counts them); then one call
 * at a time waits for Redis again, and an answer in time ends it.</li>
 * <li><b>Down</b> (an error reply, a refused or lost connection): every call is decided
 * by the {@link FailureMode} at once: allowed, denied, or decided by this instance's own
 * limits. A background check replaces a closed connection at once (not after the client's
 * reconnection back-off) and tries a real write every
 * {@link Builder#recoveryCheckInterval(Duration) recovery check interval}; its first
 * success brings calls back.</li>
 * </ul>
 * Concurrency leases that a call which timed out adds are removed after it (with Lettuce
 * queued behind it on its connection; with other clients sent by the worker once the
 * script call has returned or failed), but the tokens or window counts it takes are not
 * given back. An interrupted caller is not a failure of Redis: it is decided by this
 * instance alone, with its interrupt flag set. Every failure or late answer is reported
 * to the {@link Builder#failureListener(Consumer) failure listener}. No exception from
 * Redis ever leaves {@link #acquire} or {@link #release}; {@link #inspect} and
 * {@link #reset} throw a {@link DataAccessResourceFailureException} or
 * {@link QueryTimeoutException}.
 *
 * <h2>Two-tier mode</h2> With {@link Builder#reservoir(long) reservoir} {@code N > 0}, a
 * call whose only limit is a token bucket (and whose cost is at most {@code N} and the
 * capacity) takes up to {@code N} permits from Redis in one script call into a local
 * reservoir of this instance and is then served from it until it runs out, so Redis sees
 * about one call per {@code N} decisions. The bound on over-admission: each instance
 * holds at most {@code N - 1} unused permits, so over any interval of length {@code t} a
 * fleet of {@code I} instances admits at most {@code capacity + rate * t + I * (N - 1)}
 * calls, that is at most {@code N} per instance beyond the exact limit per refill of the
 * bucket. A reservoir's permits lapse after the bucket's window. Other algorithms, and
 * calls with several limits, ignore two-tier mode (they are decided in Redis on every
 * call). When Redis refuses a fill, the reservoir remembers how many permits were refused
 * and until when (the refusal's retry-after): until then a call that needs as many is
 * refused locally with the rest of that retry-after, as Redis would refuse it, so a
 * client over its limit costs about one round trip per retry-after, not one per call.
 *
 * <h2>Why not {@code RedisTemplate.execute(script)}</h2> It blocks for the client's own
 * command timeout and cannot be bounded per call; so the script is held as a
 * {@link RedisScript} (text, SHA-1 and a declared {@code List} result) and a function
 * library ({@code DecideScript}), and run with FCALL or EVALSHA through the connection's
 * native asynchronous API (Lettuce) or with EVALSHA through the {@code RedisConnection}
 * scripting commands (any other client), with {@code MULTI} (array of integers) as the
 * declared reply type.
 */
public final class RedisRateLimiter implements RateLimiter, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisRateLimiter.class);

	private static final DecideScript SCRIPT = DecideScript.load();

	/** The policy of the key that {@link #ping()} reads; no call uses it. */
	static final String HEALTH_POLICY = "ratelimit-health";

	/**
	 * The limit of the health key: never full for a call of cost 1, and full again a
	 * microsecond later, so that every check writes the key (a write is what a full
	 * server or a replica refuses) and Redis expires it at once.
	 */
	private static final KeyedLimit HEALTH_LIMIT = new KeyedLimit(HEALTH_POLICY, "ping",
			Limit.tokenBucket("1000000/1s"));

	/**
	 * Most calls sent without waiting (while Redis answers late) that Redis has not
	 * answered yet.
	 */
	static final int MAX_UNANSWERED = 1024;

	/**
	 * Health writes made by {@link #awaitReady} once Redis answers, so that the first
	 * calls find the code compiled.
	 */
	private static final int WARM_UP_WRITES = 200;

	/**
	 * Key TTL floor when tests give the time: their clock is not Redis's, so TTLs from it
	 * are meaningless.
	 */
	private static final long EXPLICIT_TIME_TTL_FLOOR_MILLIS = 3_600_000;

	private final ScriptRunner runner;

	private final ScriptArguments arguments;

	/** Give-backs sent and not yet answered. */
	private final Set<CompletableFuture<?>> compensations = ConcurrentHashMap.newKeySet();

	private final RedisKeys keys;

	private final long timeoutNanos;

	private final Duration timeout;

	private final FailureMode failureMode;

	/**
	 * This instance's own limits, or {@code null} in {@link FailureMode#DENY}: they
	 * decide a call that Redis answers late (in every other mode), and every call while
	 * Redis is down in {@link FailureMode#LOCAL}. Every call that Redis allows is also
	 * charged here, so that they know what this instance let through.
	 */
	private final @Nullable RateLimiter local;

	private final BackendGate gate;

	private final long recoveryCheckMicros;

	private final ScheduledExecutorService recovery;

	/** Calls sent without waiting that Redis has not answered yet. */
	private final AtomicInteger unanswered = new AtomicInteger();

	/** Lease renewals sent that Redis has not answered yet. */
	private final AtomicInteger renewalsUnanswered = new AtomicInteger();

	/**
	 * The concurrency permits this instance's own limits hold for decisions Redis
	 * allowed, released and renewed with them; a decision dropped without a release takes
	 * its entry with it (weak keys, compared by identity, as {@link Decision} has no
	 * equals).
	 */
	private final Map<Decision, List<Decision>> permitsHere = Collections.synchronizedMap(new WeakHashMap<>());

	private final @Nullable PermitReservoirs reservoirs;

	private final Consumer<Throwable> failureListener;

	private final @Nullable TimeSource timeSource;

	private final TimeSource clock;

	private RedisRateLimiter(Builder builder) {
		this.runner = ScriptRunner.of(builder.connectionFactory, SCRIPT);
		this.keys = new RedisKeys(builder.keyPrefix);
		this.arguments = new ScriptArguments((builder.timeSource != null) ? EXPLICIT_TIME_TTL_FLOOR_MILLIS : 0);
		this.timeout = builder.timeout;
		this.timeoutNanos = builder.timeout.toNanos();
		this.failureMode = builder.failureMode;
		RateLimiter local = builder.localFallback;
		if (local == null && builder.failureMode != FailureMode.DENY) {
			local = InMemoryRateLimiter.builder()
				.timeSource((builder.timeSource != null) ? builder.timeSource : TimeSource.system())
				.build();
		}
		this.local = (builder.failureMode != FailureMode.DENY) ? local : null;
		this.gate = new BackendGate(builder.coolDown.toNanos());
		this.recoveryCheckMicros = builder.recoveryCheckInterval.toNanos() / 1000;
		this.reservoirs = (builder.reservoir > 0) ? new PermitReservoirs(builder.reservoir) : null;
		this.failureListener = builder.failureListener;
		this.timeSource = builder.timeSource;
		this.clock = (builder.timeSource != null) ? builder.timeSource : TimeSource.system();
		this.recovery = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-redis-recovery");
			thread.setDaemon(true);
			return thread;
		});
		long interval = builder.recoveryCheckInterval.toNanos();
		this.recovery.scheduleWithFixedDelay(this::checkWhileUnusable, interval, interval, TimeUnit.NANOSECONDS);
		this.runner.warmUp();
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
	 * may answer late); {@code true} before the first call.
	 * @return the last known reachability
	 */
	public boolean isAvailable() {
		return !this.gate.isDown();
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
		for (int i = 0; i < WARM_UP_WRITES && deadline - System.nanoTime() > 0; i++) {
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
	 * after a failover. Each refuses this write as it refuses decisions. Only a
	 * successful write ends a late or down state.
	 * @throws DataAccessResourceFailureException or {@link QueryTimeoutException} if it
	 * does not
	 */
	public void ping() {
		try {
			writeHealthKey();
			this.gate.recovered();
		}
		catch (Exception ex) {
			if (isTimeout(ex) && this.runner.isConnected()) {
				this.gate.late();
			}
			else if (!(ex instanceof InterruptedException)) {
				// an interrupted caller learned nothing about Redis
				this.gate.failed();
			}
			throw backendException("ping Redis", ex);
		}
	}

	private void writeHealthKey() throws Exception {
		long deadline = System.nanoTime() + this.timeoutNanos;
		SlotPlan plan = new SlotPlan(List.of(HEALTH_LIMIT), this.keys);
		for (int[] group : plan.groups(this.runner.isCluster(deadline))) {
			ScriptReply reply = run(ScriptOperation.ACQUIRE, plan, group, 1, 0, timeArgument(), deadline);
			if (!reply.allAllowed()) {
				throw new IllegalStateException("Redis refused the health check's write: " + reply);
			}
		}
	}

	/**
	 * Every {@link Builder#recoveryCheckInterval(Duration) recovery check interval},
	 * while Redis is not up: replaces a closed connection (and, in a cluster, reads the
	 * topology again, so that a replica promoted by a failover gets its slots' calls; a
	 * node that died leaves its calls waiting on a cluster connection that is still open,
	 * so they are late rather than failed). While Redis is down, and once the cool-down
	 * of a late answer has passed, it also tries a health write, whose first success in
	 * time brings calls back to Redis (no caller waits for these checks, and a late state
	 * ends even with no call to probe it); a late state is not ended before its cool-down
	 * has passed.
	 */
	private void checkWhileUnusable() {
		boolean down = this.gate.isDown();
		if (!down && !this.gate.isLate()) {
			return;
		}
		try {
			this.runner.reconnectIfClosed();
			if (down || this.gate.isLateAndCooledDown()) {
				writeHealthKey();
				this.gate.recovered();
			}
		}
		catch (Throwable ex) {
			// still down: the next check tries again; a check is not a call, so it is not
			// reported as a failure
			if (logger.isTraceEnabled()) {
				logger.trace("Redis is still down", ex);
			}
		}
	}

	/**
	 * Returns what this limiter does when Redis fails.
	 * @return the failure mode
	 */
	public FailureMode failureMode() {
		return this.failureMode;
	}

	@Override
	public Decision acquire(List<KeyedLimit> limits, long cost) {
		if (cost < 0) {
			throw new IllegalArgumentException("cost must be at least 0 (was " + cost + ")");
		}
		if (limits.isEmpty()) {
			return Decision.unlimited();
		}
		PermitReservoirs reservoirs = this.reservoirs;
		if (reservoirs != null && limits.size() == 1 && isReservoirEligible(limits.get(0).limit(), cost, reservoirs)) {
			return acquireFromReservoir(limits.get(0), cost, reservoirs);
		}
		BackendGate.Route route = this.gate.enter();
		if (route == BackendGate.Route.DOWN) {
			return fallback(limits, cost);
		}
		if (route == BackendGate.Route.LATE) {
			Decision here = decideHere(limits, cost);
			if (here.isAllowed()) {
				sendWithoutWaiting(limits, cost);
			}
			return here;
		}
		if (Thread.currentThread().isInterrupted()) {
			// a caller that cannot wait for the answer sends nothing, which Redis would
			// apply all the same
			this.gate.abandoned();
			return decideHere(limits, cost);
		}
		long deadline = System.nanoTime() + this.timeoutNanos;
		try {
			Decision decision = decide(limits, cost, deadline);
			this.gate.succeeded();
			chargeHere(limits, cost, decision);
			return decision;
		}
		catch (Exception ex) {
			return failed(ex, limits, cost);
		}
		catch (Error ex) {
			this.gate.abandoned();
			throw ex;
		}
	}

	/**
	 * Returns the permit reservoir of a limit, in two-tier mode; for tests.
	 */
	PermitReservoirs.Reservoir reservoir(KeyedLimit target) {
		return Objects.requireNonNull(this.reservoirs, "not in two-tier mode").reservoir(this.keys.key(target));
	}

	private static boolean isReservoirEligible(Limit limit, long cost, PermitReservoirs reservoirs) {
		return limit.algorithm() == Algorithm.TOKEN_BUCKET && cost > 0 && cost <= reservoirs.size()
				&& cost <= limit.capacity();
	}

	private Decision decide(List<KeyedLimit> limits, long cost, long deadline) throws Exception {
		SlotPlan plan = new SlotPlan(limits, this.keys);
		List<int[]> groups = plan.groups(this.runner.isCluster(deadline));
		String time = timeArgument();
		ScriptReply.KeyOutcome[] outcomes = new ScriptReply.KeyOutcome[plan.size()];
		List<int[]> applied = new ArrayList<>();
		boolean allowed = true;
		try {
			for (int[] group : groups) {
				// after a rejection, later slots are only evaluated, but see their keys
				// for the first time as the
				// in-memory backend does (a token bucket starting below capacity starts
				// refilling now)
				ScriptReply reply = run(allowed ? ScriptOperation.ACQUIRE : ScriptOperation.SEE, plan, group, cost, 0,
						time, deadline);
				for (int i = 0; i < group.length; i++) {
					outcomes[group[i]] = reply.outcomes().get(i);
				}
				if (!reply.allAllowed()) {
					allowed = false;
				}
				else if (allowed) {
					applied.add(group);
				}
			}
		}
		catch (Exception ex) {
			compensate(plan, applied, outcomes, cost, time);
			throw ex;
		}
		if (!allowed) {
			compensate(plan, applied, outcomes, cost, time);
		}
		List<LimitStatus> statuses = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			statuses.add(outcomes[plan.keyIndex(i)].status(limits.get(i)));
		}
		List<Lease> leases = new ArrayList<>(0);
		if (allowed && cost > 0) {
			for (int j = 0; j < plan.size(); j++) {
				KeyedLimit target = plan.target(j);
				if (target.limit().algorithm() == Algorithm.CONCURRENCY) {
					leases.add(new Lease(target, plan.leaseId(j), cost));
				}
			}
		}
		return Decision.of(statuses, leases);
	}

	/**
	 * Gives back what the applied groups took, without waiting: the caller already has
	 * its answer.
	 */
	private void compensate(SlotPlan plan, List<int[]> applied, ScriptReply.KeyOutcome[] outcomes, long cost,
			String time) {
		if (cost == 0) {
			return;
		}
		for (int[] group : applied) {
			String[] extra = new String[group.length];
			for (int i = 0; i < group.length; i++) {
				int j = group[i];
				boolean concurrency = plan.target(j).limit().algorithm() == Algorithm.CONCURRENCY;
				extra[i] = concurrency ? plan.leaseId(j) : Long.toString(outcomes[j].mark());
			}
			List<byte[]> keyBytes = new ArrayList<>(group.length);
			for (int j : group) {
				keyBytes.add(bytes(plan.key(j)));
			}
			List<byte[]> args = this.arguments.of(ScriptOperation.REFUND, plan, group, extra, cost, 0, time);
			CompletableFuture<?> giveBack = this.runner.evalAsync(keyBytes, args);
			this.compensations.add(giveBack);
			giveBack.whenComplete((result, ex) -> {
				this.compensations.remove(giveBack);
				if (ex != null) {
					report(ex);
				}
			});
		}
	}

	private Decision acquireFromReservoir(KeyedLimit target, long cost, PermitReservoirs reservoirs) {
		long deadline = System.nanoTime() + this.timeoutNanos;
		PermitReservoirs.Reservoir reservoir = reservoirs.reservoir(this.keys.key(target));
		try {
			if (!reservoir.lockBefore(deadline)) {
				// Another thread is filling it and Redis is slow; it reports the failure
				// if there is one.
				return decideHere(List.of(target), cost);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return decideHere(List.of(target), cost);
		}
		try {
			long now = this.clock.nowMicros();
			LimitStatus served = reservoir.tryTake(target, cost, now);
			if (served != null) {
				Decision fromReservoir = Decision.of(List.of(served), List.of());
				chargeHere(List.of(target), cost, fromReservoir);
				return fromReservoir;
			}
			long need = reservoir.shortfall(cost);
			LimitStatus refused = reservoir.refusal(target, need, now);
			if (refused != null) {
				return Decision.of(List.of(refused), List.of());
			}
			BackendGate.Route route = this.gate.enter();
			if (route != BackendGate.Route.ASK) {
				// late: a fill sent without waiting would take permits that nobody spends
				return (route == BackendGate.Route.DOWN) ? fallback(List.of(target), cost)
						: decideHere(List.of(target), cost);
			}
			ScriptReply reply;
			try {
				SlotPlan plan = new SlotPlan(List.of(target), this.keys);
				// a time budget of its own: the wait for the lock (another thread's fill)
				// is not Redis being slow,
				// and a fill cut short would still run in Redis, its permits lost
				reply = run(ScriptOperation.FILL_RESERVOIR, plan, new int[] { 0 }, need, reservoirs.size(),
						timeArgument(), System.nanoTime() + this.timeoutNanos);
				this.gate.succeeded();
			}
			catch (Exception ex) {
				return failed(ex, List.of(target), cost);
			}
			catch (Error ex) {
				this.gate.abandoned();
				throw ex;
			}
			LimitStatus status = reservoir.filled(target, need, cost, reply.outcomes().get(0), now);
			Decision filled = Decision.of(List.of(status), List.of());
			chargeHere(List.of(target), cost, filled);
			return filled;
		}
		finally {
			reservoir.unlock();
		}
	}

	private ScriptReply run(ScriptOperation op, SlotPlan plan, int[] group, long cost, long want, String time,
			long deadline) throws Exception {
		List<byte[]> keyBytes = new ArrayList<>(group.length);
		for (int j : group) {
			keyBytes.add(bytes(plan.key(j)));
		}
		String[] extra = new String[group.length];
		for (int i = 0; i < group.length; i++) {
			extra[i] = plan.leaseId(group[i]);
		}
		List<ScriptRunner.Withdrawal> withdrawals = withdrawals(op, plan, group, keyBytes, cost);
		List<byte[]> args = this.arguments.of(op, plan, group, extra, cost, want, time);
		List<Object> reply = this.runner.eval(keyBytes, args, deadline, withdrawals);
		try {
			return ScriptReply.decode(reply, group.length);
		}
		catch (IllegalStateException ex) {
			// nobody gets the leases the script may have added
			for (ScriptRunner.Withdrawal withdrawal : withdrawals) {
				this.runner.removeMember(withdrawal.key(), withdrawal.member());
			}
			throw ex;
		}
	}

	/**
	 * Returns the concurrency leases that an acquiring call of a group would add, to be
	 * removed should its caller stop waiting for the answer (Redis may still run the
	 * script, and nobody would release them).
	 */
	private static List<ScriptRunner.Withdrawal> withdrawals(ScriptOperation op, SlotPlan plan, int[] group,
			List<byte[]> keyBytes, long cost) {
		if (op != ScriptOperation.ACQUIRE || cost == 0) {
			return List.of();
		}
		List<ScriptRunner.Withdrawal> withdrawals = null;
		for (int i = 0; i < group.length; i++) {
			int j = group[i];
			if (plan.target(j).limit().algorithm() == Algorithm.CONCURRENCY) {
				if (withdrawals == null) {
					withdrawals = new ArrayList<>(group.length - i);
				}
				withdrawals.add(new ScriptRunner.Withdrawal(keyBytes.get(i), leaseMember(plan.leaseId(j), cost)));
			}
		}
		return (withdrawals != null) ? withdrawals : List.of();
	}

	private String timeArgument() {
		TimeSource explicit = this.timeSource;
		return (explicit != null) ? Long.toString(explicit.nowMicros()) : "";
	}

	/**
	 * Returns the member a concurrency lease is held by in its sorted set, as the script
	 * writes it.
	 */
	private static byte[] leaseMember(String id, long cost) {
		return bytes(id + ":" + cost);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private Decision failed(Exception ex, List<KeyedLimit> limits, long cost) {
		if (ex instanceof InterruptedException) {
			// the caller's thread was interrupted while it waited: Redis did not fail, so
			// this call alone is decided
			// here
			Thread.currentThread().interrupt();
			this.gate.abandoned();
			return decideHere(limits, cost);
		}
		report(ex);
		if (isTimeout(ex) && this.runner.isConnected()) {
			// Late, not gone: Redis still runs the call (so it counts there), and a busy
			// instance reads answers late
			// whatever Redis does. Letting calls through unlimited would turn load into a
			// bypass: decide here.
			this.gate.late();
			return decideHere(limits, cost);
		}
		this.gate.failed();
		return fallback(limits, cost);
	}

	/**
	 * Returns whether a failure is a timeout: the limiter's own deadline, or the client's
	 * command timeout (Lettuce's, {@code spring.data.redis.timeout}, or any client's as
	 * Spring translates it), which ends a slow call before the limiter's deadline when it
	 * is the shorter of the two.
	 */
	static boolean isTimeout(Throwable ex) {
		for (Throwable current = ex; current != null; current = current.getCause()) {
			if (current instanceof TimeoutException || current instanceof QueryTimeoutException
					|| current.getClass().getName().equals("io.lettuce.core.RedisCommandTimeoutException")) {
				return true;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return false;
	}

	/**
	 * Decides a call in this instance: by its own limits, or refused in
	 * {@link FailureMode#DENY}.
	 */
	private Decision decideHere(List<KeyedLimit> limits, long cost) {
		RateLimiter here = this.local;
		if (here == null) {
			return Decision.unavailable(false, this.gate.unusableForMicros(this.recoveryCheckMicros));
		}
		Decision decision = here.acquire(limits, cost);
		return Decision.of(decision.statuses(), decision.leases(), Decision.Source.LOCAL_FALLBACK);
	}

	/**
	 * Charges this instance's own limits with a call that Redis allowed, so that, should
	 * Redis answer late, they know what this instance has let through. Each distinct
	 * limit is charged once and on its own (a limit already spent here keeps the others
	 * counting). A concurrency limit takes a permit here too, which is kept with the
	 * decision and released and renewed with it.
	 */
	private void chargeHere(List<KeyedLimit> limits, long cost, Decision decision) {
		RateLimiter here = this.local;
		if (here == null || cost == 0 || !decision.isAllowed()) {
			return;
		}
		List<Decision> permitsHere = null;
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit limit = limits.get(i);
			if (limits.subList(0, i).contains(limit)) {
				continue;
			}
			Decision charged = here.acquire(limit, cost);
			if (!charged.leases().isEmpty()) {
				if (permitsHere == null) {
					permitsHere = new ArrayList<>(1);
				}
				permitsHere.add(charged);
			}
		}
		if (permitsHere != null) {
			this.permitsHere.put(decision, permitsHere);
		}
	}

	/**
	 * Sends a call that this instance decides (Redis answers late) to Redis without
	 * waiting, so that Redis still counts what this instance lets through. Not sent: a
	 * call with a concurrency limit (nobody would release its permit in Redis), and any
	 * call while {@value #MAX_UNANSWERED} such calls are unanswered.
	 */
	private void sendWithoutWaiting(List<KeyedLimit> limits, long cost) {
		if (cost == 0 || !this.runner.isConnected()) {
			// a client would hold it until it reconnects, then apply it long after the
			// call
			return;
		}
		for (int i = 0; i < limits.size(); i++) {
			if (limits.get(i).limit().algorithm() == Algorithm.CONCURRENCY) {
				return;
			}
		}
		SlotPlan plan = new SlotPlan(limits, this.keys);
		String time = timeArgument();
		boolean cluster;
		try {
			cluster = this.runner.isCluster(System.nanoTime());
		}
		catch (Exception ex) {
			return;
		}
		for (int[] group : plan.groups(cluster)) {
			if (this.unanswered.incrementAndGet() > MAX_UNANSWERED) {
				this.unanswered.decrementAndGet();
				return;
			}
			List<byte[]> keyBytes = new ArrayList<>(group.length);
			String[] extra = new String[group.length];
			for (int i = 0; i < group.length; i++) {
				keyBytes.add(bytes(plan.key(group[i])));
				extra[i] = plan.leaseId(group[i]);
			}
			CompletableFuture<?> sent;
			try {
				sent = this.runner.evalAsync(keyBytes,
						this.arguments.of(ScriptOperation.ACQUIRE, plan, group, extra, cost, 0, time));
			}
			catch (RuntimeException ex) {
				this.unanswered.decrementAndGet();
				return;
			}
			sent.whenComplete((result, ex) -> this.unanswered.decrementAndGet());
		}
	}

	private void report(Throwable ex) {
		if (logger.isDebugEnabled()) {
			logger.debug("Redis rate limiter call failed; applying failure mode " + this.failureMode, ex);
		}
		try {
			this.failureListener.accept(ex);
		}
		catch (RuntimeException listenerFailure) {
			logger.warn("Rate limiter failure listener threw", listenerFailure);
		}
	}

	/**
	 * Decides a call while Redis is down, by the failure mode.
	 */
	private Decision fallback(List<KeyedLimit> limits, long cost) {
		return switch (this.failureMode) {
			case ALLOW -> Decision.unavailable(true, 0);
			case DENY, LOCAL -> decideHere(limits, cost);
		};
	}

	/**
	 * Returns each limit's state in Redis without consuming anything.
	 * @throws DataAccessResourceFailureException or {@link QueryTimeoutException} if
	 * Redis fails
	 */
	@Override
	public List<LimitStatus> inspect(List<KeyedLimit> limits) {
		if (limits.isEmpty()) {
			return List.of();
		}
		long deadline = System.nanoTime() + this.timeoutNanos;
		try {
			SlotPlan plan = new SlotPlan(limits, this.keys);
			String time = timeArgument();
			ScriptReply.KeyOutcome[] outcomes = new ScriptReply.KeyOutcome[plan.size()];
			for (int[] group : plan.groups(this.runner.isCluster(deadline))) {
				ScriptReply reply = run(ScriptOperation.EVALUATE, plan, group, 0, 0, time, deadline);
				for (int i = 0; i < group.length; i++) {
					outcomes[group[i]] = reply.outcomes().get(i);
				}
			}
			List<LimitStatus> statuses = new ArrayList<>(limits.size());
			for (int i = 0; i < limits.size(); i++) {
				statuses.add(outcomes[plan.keyIndex(i)].status(limits.get(i)));
			}
			return statuses;
		}
		catch (Exception ex) {
			throw backendException("read rate-limit state from Redis", ex);
		}
	}

	/**
	 * Gives back the concurrency permits of an allowed decision. A failure is reported to
	 * the failure listener, never thrown; the permit then lapses after its lease time.
	 */
	@Override
	public void release(Decision decision) {
		if (decision.leases().isEmpty()) {
			return;
		}
		if (decision.source() == Decision.Source.LOCAL_FALLBACK) {
			if (this.local != null) {
				this.local.release(decision);
			}
			return;
		}
		if (decision.source() != Decision.Source.BACKEND) {
			return;
		}
		List<Decision> here = this.permitsHere.remove(decision);
		if (here != null) {
			here.forEach(Objects.requireNonNull(this.local)::release);
		}
		long deadline = System.nanoTime() + this.timeoutNanos;
		boolean interrupted = false;
		for (Lease lease : decision.leases()) {
			try {
				CompletableFuture<?> removed = this.runner.removeMember(bytes(this.keys.key(lease.target())),
						leaseMember(lease.id(), lease.cost()));
				removed.whenComplete((result, ex) -> {
					if (ex != null) {
						report(ex);
					}
				});
				if (!interrupted && !this.gate.isDown()) {
					// Wait, so that a call made after release sees the permit back; a
					// late answer still releases it.
					ScriptRunner.await(removed, deadline, false);
				}
			}
			catch (InterruptedException ex) {
				// every lease is still released, without waiting; the flag is set again
				// at the end
				interrupted = true;
				Thread.interrupted();
			}
			catch (Exception ex) {
				// a timeout or a failure, reported when the command fails, if it does
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Renews the concurrency leases of an allowed decision whose call is still in flight:
	 * one script call per lease, sent without waiting (nobody reads the answer, and a
	 * renewal must not hold up the next), at most {@value #MAX_UNANSWERED} unanswered at
	 * a time. The permits this instance's own limits hold for the decision are renewed
	 * with it, as is a lease a local decision holds. While Redis is down nothing is sent;
	 * a renewal that fails is logged at debug level and not reported as a failure (no
	 * call is decided by it): should renewals fail for a whole lease time, the lease
	 * lapses in Redis.
	 */
	@Override
	public void renew(Decision decision) {
		if (decision.leases().isEmpty()) {
			return;
		}
		if (decision.source() == Decision.Source.LOCAL_FALLBACK) {
			if (this.local != null) {
				this.local.renew(decision);
			}
			return;
		}
		if (decision.source() != Decision.Source.BACKEND) {
			return;
		}
		List<Decision> here = this.permitsHere.get(decision);
		if (here != null) {
			here.forEach(Objects.requireNonNull(this.local)::renew);
		}
		if (this.gate.isDown() || !this.runner.isConnected()) {
			return;
		}
		String time = timeArgument();
		for (Lease lease : decision.leases()) {
			if (this.renewalsUnanswered.incrementAndGet() > MAX_UNANSWERED) {
				this.renewalsUnanswered.decrementAndGet();
				return;
			}
			SlotPlan plan = new SlotPlan(List.of(lease.target()), this.keys);
			String[] member = { lease.id() + ":" + lease.cost() };
			CompletableFuture<?> sent;
			try {
				sent = this.runner.evalAsync(List.of(bytes(plan.key(0))),
						this.arguments.of(ScriptOperation.RENEW, plan, new int[] { 0 }, member, 0, 0, time));
			}
			catch (RuntimeException ex) {
				this.renewalsUnanswered.decrementAndGet();
				return;
			}
			sent.whenComplete((result, ex) -> {
				this.renewalsUnanswered.decrementAndGet();
				if (ex != null && logger.isDebugEnabled()) {
					logger.debug("Could not renew a concurrency lease of '" + lease.target().policy() + "'", ex);
				}
			});
		}
	}

	/**
	 * Deletes a keyed limit's state in Redis (and its permit reservoir and local fallback
	 * state).
	 * @throws DataAccessResourceFailureException or {@link QueryTimeoutException} if
	 * Redis fails
	 */
	@Override
	public void reset(KeyedLimit limit) {
		String key = this.keys.key(limit);
		if (this.reservoirs != null) {
			this.reservoirs.forget(key);
		}
		if (this.local != null) {
			this.local.reset(limit);
		}
		try {
			this.runner.delete(bytes(key), System.nanoTime() + this.timeoutNanos);
		}
		catch (Exception ex) {
			throw backendException("reset rate-limit state in Redis", ex);
		}
	}

	private RuntimeException backendException(String action, Exception ex) {
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		if (ex instanceof TimeoutException) {
			return new QueryTimeoutException("Could not " + action + ": no answer within " + this.timeout, ex);
		}
		return new DataAccessResourceFailureException("Could not " + action + ": " + ex.getMessage(), ex);
	}

	/**
	 * Releases this limiter's threads and its connection (the connection factory stays
	 * open).
	 */
	@Override
	public void close() {
		// give-backs still on their way would be lost with the connection: let them land,
		// for one timeout at most
		awaitCompensations(Duration.ofNanos(this.timeoutNanos));
		this.recovery.shutdownNow();
		this.runner.close();
	}

	/**
	 * Waits until the latest load of the function library has been answered (or has
	 * failed), for at most {@code timeout}.
	 * @param timeout the longest wait
	 */
	void awaitLibraryLoad(Duration timeout) {
		try {
			this.runner.libraryLoad().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// the caller checks what is on the server
		}
	}

	/**
	 * Waits until the give-backs sent so far have been answered (or have failed), for at
	 * most {@code timeout}.
	 * @param timeout the longest wait
	 * @return whether none is still on its way
	 */
	boolean awaitCompensations(Duration timeout) {
		CompletableFuture<?>[] pending = this.compensations.toArray(new CompletableFuture<?>[0]);
		if (pending.length == 0) {
			return true;
		}
		try {
			CompletableFuture.allOf(pending).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// a failed give-back was reported when it failed; a slow one is waited for no
			// longer
		}
		return Arrays.stream(pending).allMatch(CompletableFuture::isDone);
	}

	/**
	 * Builds a {@link RedisRateLimiter}; every value is checked when it is set.
	 */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = "rl";

		private Duration timeout = Duration.ofMillis(100);

		private FailureMode failureMode = FailureMode.ALLOW;

		private @Nullable RateLimiter localFallback;

		private Duration coolDown = Duration.ofSeconds(1);

		private Duration recoveryCheckInterval = Duration.ofMillis(200);

		private long reservoir;

		private Consumer<Throwable> failureListener = (ex) -> {
		};

		private @Nullable TimeSource timeSource;

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
		 * Builds the limiter, which starts connecting and loading its script in the
		 * background (a failure there is ignored, and retried by the first call).
		 * @return the limiter
		 */
		public RedisRateLimiter build() {
			return new RedisRateLimiter(this);
		}

	}

}
