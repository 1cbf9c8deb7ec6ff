package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Lease;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.failure.BackendUnavailableException;
import dev.ratelimit.core.failure.RemoteRateLimiter;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Decides calls in Redis and nothing else: plans the keys by hash slot, runs the script,
 * decodes its reply, gives back what an earlier slot took, and serves the two-tier
 * reservoir. A failure is thrown as a {@link BackendUnavailableException}; what then
 * happens is the failure policy's to say.
 */
final class RedisBackend implements RemoteRateLimiter, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisBackend.class);

	private static final DecideScript SCRIPT = DecideScript.load();

	/**
	 * The limit of the health key: never full for a call of cost 1, and full again a
	 * microsecond later, so that every check writes the key (a write is what a full
	 * server or a replica refuses) and Redis expires it at once.
	 */
	private static final KeyedLimit HEALTH_LIMIT = new KeyedLimit(RedisRateLimiter.HEALTH_POLICY, "ping",
			Limit.tokenBucket("1000000/1s"));

	/**
	 * How many health keys are tried for one master of a cluster: a master that serves
	 * one slot of 16384 gets one within about 16,000 tries, almost surely within this.
	 */
	private static final int MAX_HEALTH_KEY_CANDIDATES = 1 << 18;

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

	/** Calls sent without waiting that Redis has not answered yet. */
	private final AtomicInteger unanswered = new AtomicInteger();

	/** Lease renewals sent that Redis has not answered yet. */
	private final AtomicInteger renewalsUnanswered = new AtomicInteger();

	private final @Nullable PermitReservoirs reservoirs;

	private final Consumer<Throwable> failureListener;

	/** The clock the script decides by; {@code null}: Redis {@code TIME}. */
	private final @Nullable TimeSource timeSource;

	/** This instance's clock, which its reservoirs read. */
	private final TimeSource clock;

	private final RedisConnectionFactory connectionFactory;

	/** The health key of each master of a cluster, by node id. */
	private final Map<String, KeyedLimit> healthLimits = new ConcurrentHashMap<>();

	RedisBackend(RedisRateLimiter.Builder builder) {
		this.connectionFactory = builder.connectionFactory;
		this.runner = ScriptRunner.of(builder.connectionFactory, SCRIPT);
		this.keys = new RedisKeys(builder.keyPrefix);
		this.arguments = new ScriptArguments(
				(builder.timeSource != null || builder.scriptTimeSource != null) ? EXPLICIT_TIME_TTL_FLOOR_MILLIS : 0);
		this.timeout = builder.timeout;
		this.timeoutNanos = builder.timeout.toNanos();
		this.reservoirs = (builder.reservoir > 0) ? new PermitReservoirs(builder.reservoir) : null;
		this.failureListener = builder.failureListener;
		this.timeSource = (builder.scriptTimeSource != null) ? builder.scriptTimeSource : builder.timeSource;
		this.clock = (builder.timeSource != null) ? builder.timeSource : TimeSource.system();
		this.runner.warmUp();
	}

	@Override
	public Decision acquire(List<KeyedLimit> limits, long cost) {
		if (isReservoirEligible(limits, cost)) {
			return acquireFromReservoirs(limits, cost);
		}
		try {
			return decide(limits, cost, System.nanoTime() + this.timeoutNanos);
		}
		catch (Exception ex) {
			throw unavailable(ex);
		}
	}

	/**
	 * Decides a call in Redis as {@link #acquire} does, without blocking the calling
	 * thread: the script runs through the runner's asynchronous form, the slot groups of
	 * a cluster one after another, each from the callback of the last. The future fails
	 * with a {@link BackendUnavailableException} as {@link #acquire} throws it; a timeout
	 * is one.
	 */
	@Override
	public CompletableFuture<Decision> acquireAsync(List<KeyedLimit> limits, long cost) {
		long deadline = System.nanoTime() + this.timeoutNanos;
		CompletableFuture<Decision> decided;
		try {
			decided = isReservoirEligible(limits, cost)
					? acquireFromReservoirsAsync(reservoirCall(limits, cost), deadline)
					: decideAsync(limits, cost, deadline);
		}
		catch (RuntimeException ex) {
			decided = CompletableFuture.failedFuture(ex);
		}
		return decided.handle((decision, ex) -> {
			if (ex != null) {
				throw failure(ex);
			}
			return decision;
		});
	}

	/**
	 * Serves a call from the reservoirs of its keys, waiting for another call's fill of
	 * one of them at most the timeout; {@code null} when the reservoirs cannot say.
	 */
	@Override
	public @Nullable Decision decideWithoutAsking(List<KeyedLimit> limits, long cost, boolean takeAhead) {
		if (!isReservoirEligible(limits, cost)) {
			return null;
		}
		PermitReservoirs.Call call = reservoirCall(limits, cost);
		long deadline = System.nanoTime() + this.timeoutNanos;
		while (true) {
			PermitReservoirs.Turn turn = reservoirs().take(call, this.clock.nowMicros(), false, takeAhead);
			if (turn == null) {
				return null;
			}
			if (turn instanceof PermitReservoirs.Answered answered) {
				return decision(answered);
			}
			awaitFill(((PermitReservoirs.AwaitFill) turn).fill(), deadline);
		}
	}

	/**
	 * Serves a call from the reservoirs of its keys as {@link #decideWithoutAsking} does,
	 * without blocking: a call that finds another call's fill on its way tries again once
	 * that fill has ended, from its callback, and fails with {@code BUSY} if it has not
	 * ended within the timeout.
	 */
	@Override
	public CompletableFuture<@Nullable Decision> decideWithoutAskingAsync(List<KeyedLimit> limits, long cost,
			boolean takeAhead) {
		if (!isReservoirEligible(limits, cost)) {
			return CompletableFuture.completedFuture(null);
		}
		try {
			return peekAsync(reservoirCall(limits, cost), System.nanoTime() + this.timeoutNanos, takeAhead);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private CompletableFuture<@Nullable Decision> peekAsync(PermitReservoirs.Call call, long deadline,
			boolean takeAhead) {
		PermitReservoirs.Turn turn = reservoirs().take(call, this.clock.nowMicros(), false, takeAhead);
		if (turn == null) {
			return CompletableFuture.completedFuture(null);
		}
		if (turn instanceof PermitReservoirs.Answered answered) {
			return CompletableFuture.completedFuture(decision(answered));
		}
		return afterFill(((PermitReservoirs.AwaitFill) turn).fill(), deadline)
			.thenCompose((ended) -> peekAsync(call, deadline, takeAhead));
	}

	/**
	 * Returns the permit reservoir of a limit, in two-tier mode.
	 */
	PermitReservoirs.Reservoir reservoir(KeyedLimit target) {
		return reservoirs().reservoir(target);
	}

	private PermitReservoirs reservoirs() {
		return Objects.requireNonNull(this.reservoirs, "not in two-tier mode");
	}

	private PermitReservoirs.Call reservoirCall(List<KeyedLimit> limits, long cost) {
		return reservoirs().call(limits, cost);
	}

	private boolean isReservoirEligible(List<KeyedLimit> limits, long cost) {
		PermitReservoirs reservoirs = this.reservoirs;
		return reservoirs != null && reservoirs.isEligible(limits, cost);
	}

	private Decision decide(List<KeyedLimit> limits, long cost, long deadline) throws Exception {
		SlotPlan plan = new SlotPlan(limits, this.keys);
		boolean cluster = this.runner.isCluster(deadline);
		String time = timeArgument();
		SlotOutcomes slots = new SlotOutcomes(plan.size());
		for (int[] group : plan.groups(cluster)) {
			try {
				slots.record(group, run(slots.nextOperation(), plan, group, cost, 0, time, deadline));
			}
			catch (Exception ex) {
				compensate(plan, slots, cost, time);
				throw unavailable(ex, slotOf(plan, group, cluster));
			}
		}
		return decision(limits, cost, plan, slots, time);
	}

	/**
	 * Returns the slot of a group's keys in a cluster, where they share one, so that a
	 * failure is held against the master that serves it; -1 for Redis as a whole.
	 */
	private static int slotOf(SlotPlan plan, int[] group, boolean cluster) {
		return cluster ? RedisKeys.slot(plan.key(group[0])) : -1;
	}

	/**
	 * Fails a group's future as {@link #unavailable(Exception, int)} says, so that a
	 * failure names the master of its slot.
	 */
	private <T> CompletableFuture<T> onSlot(CompletableFuture<T> group, int slot) {
		if (slot < 0) {
			return group;
		}
		return group.handle((result, ex) -> {
			if (ex != null) {
				Throwable cause = cause(ex);
				throw new CompletionException(
						(cause instanceof Exception exception) ? unavailable(exception, slot) : cause);
			}
			return result;
		});
	}

	/**
	 * Decides a call as {@link #decide} does, the groups one after another by
	 * composition: each group's script is sent from the callback of the last one's reply.
	 */
	private CompletableFuture<Decision> decideAsync(List<KeyedLimit> limits, long cost, long deadline) {
		SlotPlan plan = new SlotPlan(limits, this.keys);
		String time = timeArgument();
		return this.runner.isClusterAsync(deadline).thenCompose((cluster) -> {
			SlotOutcomes slots = new SlotOutcomes(plan.size());
			CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
			for (int[] group : plan.groups(cluster)) {
				int slot = slotOf(plan, group, cluster);
				done = done
					.thenCompose((previous) -> onSlot(
							runAsync(slots.nextOperation(), plan, group, cost, 0, time, deadline), slot))
					.thenAccept((reply) -> slots.record(group, reply));
			}
			return done.handle((ignored, ex) -> {
				if (ex != null) {
					compensate(plan, slots, cost, time);
					throw (ex instanceof CompletionException completion) ? completion : new CompletionException(ex);
				}
				return decision(limits, cost, plan, slots, time);
			});
		});
	}

	/**
	 * Makes the decision of a call whose groups have all answered, after giving back what
	 * the applied groups took if a later one rejected.
	 */
	private Decision decision(List<KeyedLimit> limits, long cost, SlotPlan plan, SlotOutcomes slots, String time) {
		if (!slots.allowed) {
			compensate(plan, slots, cost, time);
		}
		List<LimitStatus> statuses = new ArrayList<>(limits.size());
		long[] marks = slots.allowed ? new long[limits.size()] : null;
		for (int i = 0; i < limits.size(); i++) {
			ScriptReply.KeyOutcome outcome = slots.outcomes[plan.keyIndex(i)];
			statuses.add(outcome.status(limits.get(i)));
			if (marks != null && limits.get(i).limit().algorithm() != Algorithm.CONCURRENCY) {
				marks[i] = outcome.mark();
			}
		}
		List<Lease> leases = new ArrayList<>(0);
		if (slots.allowed && cost > 0) {
			for (int j = 0; j < plan.size(); j++) {
				KeyedLimit target = plan.target(j);
				if (target.limit().algorithm() == Algorithm.CONCURRENCY) {
					leases.add(new Lease(target, plan.leaseId(j), cost));
				}
			}
		}
		return Decision.of(statuses, leases, Decision.Source.BACKEND, marks);
	}

	/**
	 * Gives back permits of a decision Redis allowed as {@link #refundAsync} does,
	 * waiting for Redis's answer at most the timeout; a failure is reported, never
	 * thrown: the permits then stay spent.
	 */
	@Override
	public void refund(Decision decision, List<KeyedLimit> limits, long cost) {
		CompletableFuture<Void> done = refundAsync(decision, limits, cost);
		try {
			ScriptRunner.await(done, System.nanoTime() + this.timeoutNanos, false);
		}
		catch (InterruptedException ex) {
			// sent all the same; the flag is set again
		}
		catch (Exception ex) {
			// late: Redis still applies it
		}
	}

	/**
	 * Gives back permits of a decision Redis allowed: in two-tier mode to the reservoirs
	 * its call took them from (unless they lapsed meanwhile), else by the script's refund
	 * of each key, from the marks its acquire returned, one script call per hash slot in
	 * a cluster. The future completes once Redis has answered, and never exceptionally: a
	 * failure is reported to the failure listener, and the permits stay spent.
	 */
	@Override
	public CompletableFuture<Void> refundAsync(Decision decision, List<KeyedLimit> limits, long cost) {
		if (!decision.isAllowed() || decision.source() != Decision.Source.BACKEND || cost <= 0) {
			return CompletableFuture.completedFuture(null);
		}
		List<LimitStatus> statuses = decision.statuses();
		List<KeyedLimit> targets = new ArrayList<>(limits.size());
		List<Long> marks = new ArrayList<>(limits.size());
		for (KeyedLimit limit : limits) {
			int index = indexOf(statuses, limit);
			if (index >= 0 && limit.limit().algorithm() != Algorithm.CONCURRENCY && !targets.contains(limit)) {
				targets.add(limit);
				marks.add(decision.mark(index));
			}
		}
		if (targets.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		if (isReservoirEligible(statuses.stream().map(LimitStatus::target).toList(), cost)) {
			// the reservoirs took them: each gets them back while the window its mark
			// names
			// (where it counted them) is still its own
			long now = this.clock.nowMicros();
			for (int i = 0; i < targets.size(); i++) {
				KeyedLimit target = targets.get(i);
				reservoirs().reservoir(target).giveBack(target, cost, marks.get(i), now);
			}
			return CompletableFuture.completedFuture(null);
		}
		SlotPlan plan = new SlotPlan(targets, this.keys);
		String time = timeArgument();
		CompletableFuture<Void> sent;
		try {
			sent = this.runner.isClusterAsync(System.nanoTime() + this.timeoutNanos).thenCompose((cluster) -> {
				List<int[]> groups = plan.groups(cluster);
				CompletableFuture<?>[] each = new CompletableFuture<?>[groups.size()];
				for (int g = 0; g < each.length; g++) {
					int[] group = groups.get(g);
					String[] extra = new String[group.length];
					for (int i = 0; i < group.length; i++) {
						extra[i] = Long.toString(marks.get(targets.indexOf(plan.target(group[i]))));
					}
					each[g] = this.runner.evalAsync(keyBytes(plan, group),
							this.arguments.of(ScriptOperation.REFUND, plan, group, extra, cost, 0, time));
				}
				return CompletableFuture.allOf(each);
			});
		}
		catch (RuntimeException ex) {
			sent = CompletableFuture.failedFuture(ex);
		}
		return sent.handle((done, ex) -> {
			if (ex != null) {
				report(ex);
			}
			return null;
		});
	}

	/**
	 * A decision the reservoirs served is marked by where they counted its permits (the
	 * end of a window by Redis's clock), which this instance's own limits cannot read:
	 * they get it without marks. The script's marks (a window's start, a log entry's
	 * time) mean to them what their own do.
	 */
	@Override
	public Decision forLocalRefund(Decision decision, long cost) {
		List<KeyedLimit> targets = decision.statuses().stream().map(LimitStatus::target).toList();
		return isReservoirEligible(targets, cost)
				? Decision.of(decision.statuses(), decision.leases(), decision.source(), null) : decision;
	}

	private static int indexOf(List<LimitStatus> statuses, KeyedLimit target) {
		for (int i = 0; i < statuses.size(); i++) {
			if (statuses.get(i).target().equals(target)) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Returns the decision of a call the reservoirs answered, after sending the fill
	 * ahead it started, if any.
	 */
	private Decision decision(PermitReservoirs.Answered answered) {
		PermitReservoirs.Fill ahead = answered.ahead();
		if (ahead != null) {
			fillAhead(ahead);
		}
		return Decision.of(answered.statuses(), List.of(), Decision.Source.BACKEND, answered.marks());
	}

	/**
	 * Sends a fill ahead, which no call waits for: Redis's answer fills the reservoirs; a
	 * failure is reported and ends the fill, as does a lost connection, with which the
	 * fill is not sent.
	 */
	private void fillAhead(PermitReservoirs.Fill fill) {
		if (!this.runner.isConnected()) {
			fill.abandon();
			return;
		}
		FillPlan plan;
		CompletableFuture<Boolean> sent;
		try {
			plan = new FillPlan(fill);
			sent = sendFill(plan, 0, System.nanoTime() + this.timeoutNanos);
		}
		catch (RuntimeException ex) {
			fill.abandon();
			report(ex);
			return;
		}
		sent.whenComplete((granted, ex) -> {
			try {
				if (ex != null) {
					report(ex);
				}
				else {
					fill.filled(plan.replies);
				}
			}
			finally {
				fill.abandon();
			}
		});
	}

	/**
	 * What the groups of one call answered so far.
	 */
	private static final class SlotOutcomes {

		final ScriptReply.KeyOutcome[] outcomes;

		/** The groups that took their permits, to give back should a later one reject. */
		final List<int[]> applied = new ArrayList<>();

		boolean allowed = true;

		SlotOutcomes(int keys) {
			this.outcomes = new ScriptReply.KeyOutcome[keys];
		}

		/**
		 * After a rejection, later slots are only evaluated, but see their keys for the
		 * first time as the in-memory backend does (a token bucket starting below
		 * capacity starts refilling now).
		 */
		ScriptOperation nextOperation() {
			return this.allowed ? ScriptOperation.ACQUIRE : ScriptOperation.SEE;
		}

		void record(int[] group, ScriptReply reply) {
			for (int i = 0; i < group.length; i++) {
				this.outcomes[group[i]] = reply.outcomes().get(i);
			}
			if (!reply.allAllowed()) {
				this.allowed = false;
			}
			else if (this.allowed) {
				this.applied.add(group);
			}
		}

	}

	/**
	 * Gives back what the applied groups took, without waiting: the caller already has
	 * its answer.
	 */
	private void compensate(SlotPlan plan, SlotOutcomes slots, long cost, String time) {
		if (cost == 0) {
			return;
		}
		for (int[] group : slots.applied) {
			String[] extra = new String[group.length];
			for (int i = 0; i < group.length; i++) {
				int j = group[i];
				boolean concurrency = plan.target(j).limit().algorithm() == Algorithm.CONCURRENCY;
				extra[i] = concurrency ? plan.leaseId(j) : Long.toString(slots.outcomes[j].mark());
			}
			List<byte[]> keyBytes = keyBytes(plan, group);
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

	/**
	 * Waits for another call's fill of a reservoir to end, at most until the deadline: a
	 * caller that waits longer is decided by the failure policy ({@code BUSY}), and the
	 * filling call reports the failure if Redis fails.
	 */
	private static void awaitFill(CompletableFuture<Void> fill, long deadline) {
		try {
			// never cancelled: the fill is another call's
			ScriptRunner.await(fill, deadline, false);
			return;
		}
		catch (InterruptedException ex) {
			// the flag is set again: the failure policy decides this caller here
		}
		catch (Exception ex) {
			// the deadline passed
		}
		throw busy();
	}

	/**
	 * Returns a future done once another call's fill of a reservoir has ended, or failed
	 * with {@code BUSY} at the deadline; it waits on no thread.
	 */
	private static CompletableFuture<Void> afterFill(CompletableFuture<Void> fill, long deadline) {
		// a copy: the deadline ends this call's wait, not the other call's fill
		return DeadlineTimer.bound(fill.copy(), deadline).handle((ended, ex) -> {
			if (ex != null) {
				throw busy();
			}
			return ended;
		});
	}

	private static BackendUnavailableException busy() {
		return new BackendUnavailableException(BackendUnavailableException.Reason.BUSY,
				"Another call is filling the permit reservoir of this key");
	}

	private Decision acquireFromReservoirs(List<KeyedLimit> limits, long cost) {
		PermitReservoirs.Call call = reservoirCall(limits, cost);
		long deadline = System.nanoTime() + this.timeoutNanos;
		while (true) {
			// another call may have filled them since they were looked at
			PermitReservoirs.Turn turn = reservoirs().take(call, this.clock.nowMicros(), true, true);
			if (turn instanceof PermitReservoirs.Answered answered) {
				return decision(answered);
			}
			if (turn instanceof PermitReservoirs.AwaitFill other) {
				awaitFill(other.fill(), deadline);
				continue;
			}
			PermitReservoirs.Fill fill = (PermitReservoirs.Fill) Objects.requireNonNull(turn);
			try {
				// a time budget of its own: the wait for another call's fill is not Redis
				// being slow, and a fill cut short would still run in Redis, its permits
				// lost
				long fillDeadline = System.nanoTime() + this.timeoutNanos;
				FillPlan plan = new FillPlan(fill);
				boolean cluster = this.runner.isCluster(fillDeadline);
				for (int[] group : plan.slots.groups(cluster)) {
					ScriptReply reply;
					try {
						reply = run(ScriptOperation.FILL_RESERVOIR, plan.slots, group, plan.needs(group), cost,
								reservoirs().size(), plan.time, fillDeadline);
					}
					catch (Exception ex) {
						throw unavailable(ex, slotOf(plan.slots, group, cluster));
					}
					if (!plan.record(group, reply)) {
						break;
					}
				}
				return Decision.of(fill.filled(plan.replies), List.of(), Decision.Source.BACKEND, fill.marks());
			}
			catch (Exception ex) {
				throw unavailable(ex);
			}
			finally {
				fill.abandon();
			}
		}
	}

	/**
	 * Serves a call from the reservoirs of its keys as {@link #acquireFromReservoirs}
	 * does, without blocking: a call that finds another call's fill on its way tries
	 * again once it has ended (the timeout bounds that wait, then {@code BUSY}); a call
	 * that fills sends the fill asynchronously (a cluster's slots one after another) and
	 * applies Redis's answer in its callback.
	 */
	private CompletableFuture<Decision> acquireFromReservoirsAsync(PermitReservoirs.Call call, long deadline) {
		PermitReservoirs.Turn turn = reservoirs().take(call, this.clock.nowMicros(), true, true);
		if (turn instanceof PermitReservoirs.Answered answered) {
			return CompletableFuture.completedFuture(decision(answered));
		}
		if (turn instanceof PermitReservoirs.AwaitFill other) {
			return afterFill(other.fill(), deadline).thenCompose((ended) -> acquireFromReservoirsAsync(call, deadline));
		}
		PermitReservoirs.Fill fill = (PermitReservoirs.Fill) Objects.requireNonNull(turn);
		CompletableFuture<Boolean> filled;
		FillPlan plan;
		try {
			plan = new FillPlan(fill);
			filled = sendFill(plan, call.cost(), System.nanoTime() + this.timeoutNanos);
		}
		catch (RuntimeException ex) {
			fill.abandon();
			return CompletableFuture.failedFuture(failure(ex));
		}
		return filled.handle((granted, ex) -> {
			try {
				if (ex != null) {
					throw failure(ex);
				}
				return Decision.of(fill.filled(plan.replies), List.of(), Decision.Source.BACKEND, fill.marks());
			}
			finally {
				fill.abandon();
			}
		});
	}

	/**
	 * Sends a fill's script calls, a cluster's slots one after another, each once the
	 * last has granted its keys; completes with whether every slot granted them.
	 */
	private CompletableFuture<Boolean> sendFill(FillPlan plan, long cost, long deadline) {
		return this.runner.isClusterAsync(deadline).thenCompose((cluster) -> {
			CompletableFuture<Boolean> granted = CompletableFuture.completedFuture(true);
			for (int[] group : plan.slots.groups(cluster)) {
				int slot = slotOf(plan.slots, group, cluster);
				granted = granted.thenCompose((going) -> !going ? CompletableFuture.completedFuture(false)
						: onSlot(runAsync(ScriptOperation.FILL_RESERVOIR, plan.slots, group, plan.needs(group), cost,
								reservoirs().size(), plan.time, deadline), slot)
							.thenApply((reply) -> plan.record(group, reply)));
			}
			return granted;
		});
	}

	/**
	 * The script calls of one fill: the keys it fills, planned by hash slot, what each
	 * must be granted at least, and Redis's answers so far.
	 */
	private final class FillPlan {

		final SlotPlan slots;

		final long[] needs;

		final long[] wants;

		final long[] owns;

		final long[] countedUntils;

		final String time = timeArgument();

		final PermitReservoirs.@Nullable FillReply[] replies;

		FillPlan(PermitReservoirs.Fill fill) {
			// the fill's targets are distinct keys: the plan keeps their order
			this.slots = new SlotPlan(fill.targets(), RedisBackend.this.keys);
			this.needs = fill.needs();
			this.wants = fill.wants();
			this.owns = fill.owns();
			this.countedUntils = fill.countedUntils();
			this.replies = new PermitReservoirs.FillReply[this.needs.length];
		}

		/**
		 * Returns the extra value of each key of a group, {@code need:want:own:until}:
		 * the least and the most permits it takes, and the call's own permits of its
		 * reservoir with the end of their window, which it takes too if that window has
		 * ended.
		 */
		String[] needs(int[] group) {
			String[] extra = new String[group.length];
			for (int i = 0; i < group.length; i++) {
				int k = group[i];
				extra[i] = this.needs[k] + ":" + this.wants[k] + ":" + this.owns[k] + ":" + this.countedUntils[k];
			}
			return extra;
		}

		/**
		 * Records a group's answers; returns whether Redis granted them, so that the next
		 * group is asked.
		 */
		boolean record(int[] group, ScriptReply reply) {
			for (int i = 0; i < group.length; i++) {
				this.replies[group[i]] = new PermitReservoirs.FillReply(reply.outcomes().get(i), reply.now());
			}
			return reply.allAllowed();
		}

	}

	/**
	 * Says why a call failed: late if Redis did not answer in time while the connection
	 * is up, down otherwise; an interrupted caller keeps its flag and learned nothing.
	 */
	private BackendUnavailableException unavailable(Exception ex) {
		return unavailable(ex, -1);
	}

	/**
	 * Says why a call on a slot failed, as {@link #unavailable(Exception)} does, judging
	 * the connection to the master that serves the slot, which the failure names; a slot
	 * of -1 is Redis as a whole.
	 */
	private BackendUnavailableException unavailable(Exception ex, int slot) {
		if (ex instanceof BackendUnavailableException unavailable) {
			return unavailable;
		}
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
			return new BackendUnavailableException(BackendUnavailableException.Reason.BUSY,
					"Interrupted while waiting for Redis", ex);
		}
		boolean connected = (slot >= 0) ? this.runner.isConnected(slot) : this.runner.isConnected();
		BackendUnavailableException.Reason reason = (isTimeout(ex) && connected)
				? BackendUnavailableException.Reason.LATE : BackendUnavailableException.Reason.DOWN;
		String master = (slot >= 0) ? this.runner.nodeOf(slot) : null;
		return new BackendUnavailableException(reason, "Redis call failed: " + ex.getMessage(), ex, master);
	}

	/**
	 * Says why an asynchronous call failed, as {@link #unavailable} does, in the
	 * exception a stage of a future throws.
	 */
	private CompletionException failure(Throwable ex) {
		Throwable cause = cause(ex);
		return new CompletionException((cause instanceof Exception exception) ? unavailable(exception) : cause);
	}

	/**
	 * Returns what a stage of a future failed with, out of the exceptions that wrap it.
	 */
	private static Throwable cause(Throwable ex) {
		Throwable cause = ex;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private ScriptReply run(ScriptOperation op, SlotPlan plan, int[] group, long cost, long want, String time,
			long deadline) throws Exception {
		return run(op, plan, group, leaseIds(plan, group), cost, want, time, deadline);
	}

	private ScriptReply run(ScriptOperation op, SlotPlan plan, int[] group, String[] extra, long cost, long want,
			String time, long deadline) throws Exception {
		ScriptCall call = scriptCall(op, plan, group, extra, cost, want, time);
		return decode(this.runner.eval(call.keys(), call.args(), deadline, call.withdrawals()), group, call);
	}

	private CompletableFuture<ScriptReply> runAsync(ScriptOperation op, SlotPlan plan, int[] group, long cost,
			long want, String time, long deadline) {
		return runAsync(op, plan, group, leaseIds(plan, group), cost, want, time, deadline);
	}

	private CompletableFuture<ScriptReply> runAsync(ScriptOperation op, SlotPlan plan, int[] group, String[] extra,
			long cost, long want, String time, long deadline) {
		ScriptCall call = scriptCall(op, plan, group, extra, cost, want, time);
		return this.runner.evalAsync(call.keys(), call.args(), deadline, call.withdrawals())
			.thenApply((reply) -> decode(reply, group, call));
	}

	private static String[] leaseIds(SlotPlan plan, int[] group) {
		String[] extra = new String[group.length];
		for (int i = 0; i < group.length; i++) {
			extra[i] = plan.leaseId(group[i]);
		}
		return extra;
	}

	private ScriptCall scriptCall(ScriptOperation op, SlotPlan plan, int[] group, String[] extra, long cost, long want,
			String time) {
		List<byte[]> keyBytes = keyBytes(plan, group);
		List<ScriptRunner.Withdrawal> withdrawals = withdrawals(op, plan, group, keyBytes, cost);
		return new ScriptCall(keyBytes, this.arguments.of(op, plan, group, extra, cost, want, time), withdrawals);
	}

	private ScriptReply decode(List<Object> reply, int[] group, ScriptCall call) {
		try {
			return ScriptReply.decode(reply, group.length);
		}
		catch (IllegalStateException ex) {
			// nobody gets the leases the script may have added
			for (ScriptRunner.Withdrawal withdrawal : call.withdrawals()) {
				this.runner.removeMember(withdrawal.key(), withdrawal.member());
			}
			throw ex;
		}
	}

	/**
	 * One script call on a group: its keys, its arguments, and the members to withdraw
	 * should its caller stop waiting.
	 */
	private record ScriptCall(List<byte[]> keys, List<byte[]> args, List<ScriptRunner.Withdrawal> withdrawals) {

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

	/**
	 * Returns the keys of one script call on a group: its state keys, then the penalty
	 * keys of its limits that carry a penalty.
	 */
	private static List<byte[]> keyBytes(SlotPlan plan, int[] group) {
		List<String> keys = plan.keys(group);
		List<byte[]> keyBytes = new ArrayList<>(keys.size());
		for (String key : keys) {
			keyBytes.add(bytes(key));
		}
		return keyBytes;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
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
	 * Sends a call that this instance decides (Redis answers late) to Redis without
	 * waiting, so that Redis still counts what this instance lets through. Not sent: a
	 * call with a concurrency limit (nobody would release its permit in Redis), and any
	 * call while {@value RedisRateLimiter#MAX_UNANSWERED} such calls are unanswered.
	 */
	@Override
	public void send(List<KeyedLimit> limits, long cost) {
		if (isReservoirEligible(limits, cost)) {
			// as before the split: a call the reservoir would serve is not sent (a fill
			// sent without waiting would take permits that nobody spends)
			return;
		}
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
			if (cluster && !this.runner.isConnected(slotOf(plan, group, true))) {
				continue;
			}
			if (this.unanswered.incrementAndGet() > RedisRateLimiter.MAX_UNANSWERED) {
				this.unanswered.decrementAndGet();
				return;
			}
			List<byte[]> keyBytes = keyBytes(plan, group);
			String[] extra = new String[group.length];
			for (int i = 0; i < group.length; i++) {
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

	/**
	 * Writes the health key, with a real decision that no call uses.
	 * @throws BackendUnavailableException if Redis does not take it in time
	 */
	@Override
	public void check() {
		writeHealthKey(HEALTH_LIMIT);
	}

	/**
	 * Writes a health key of one master of a cluster: one that hashes to a slot the
	 * master serves.
	 * @throws BackendUnavailableException if the master does not take it in time, or
	 * serves no slot
	 */
	@Override
	public void check(String part) {
		writeHealthKey(healthLimitOf(part));
	}

	private void writeHealthKey(KeyedLimit health) {
		long deadline = System.nanoTime() + this.timeoutNanos;
		SlotPlan plan = new SlotPlan(List.of(health), this.keys);
		int slot = -1;
		try {
			boolean cluster = this.runner.isCluster(deadline);
			for (int[] group : plan.groups(cluster)) {
				slot = slotOf(plan, group, cluster);
				ScriptReply reply = run(ScriptOperation.ACQUIRE, plan, group, 1, 0, timeArgument(), deadline);
				if (!reply.allAllowed()) {
					throw new IllegalStateException("Redis refused the health check's write: " + reply);
				}
			}
		}
		catch (Exception ex) {
			throw unavailable(ex, slot);
		}
	}

	/**
	 * Returns a health key in a slot the master serves: the first of {@code ping} (the
	 * key of {@link #check()}), {@code ping-1}, {@code ping-2}, ... whose key hashes
	 * there, found once per master and looked for again if its slot moved to another
	 * master.
	 */
	private KeyedLimit healthLimitOf(String master) {
		KeyedLimit known = this.healthLimits.get(master);
		if (known != null && master.equals(this.runner.nodeOf(RedisKeys.slot(this.keys.key(known))))) {
			return known;
		}
		for (int i = 0; i < MAX_HEALTH_KEY_CANDIDATES; i++) {
			KeyedLimit candidate = (i == 0) ? HEALTH_LIMIT
					: new KeyedLimit(RedisRateLimiter.HEALTH_POLICY, "ping-" + i, HEALTH_LIMIT.limit());
			if (master.equals(this.runner.nodeOf(RedisKeys.slot(this.keys.key(candidate))))) {
				this.healthLimits.put(master, candidate);
				return candidate;
			}
		}
		throw new BackendUnavailableException(BackendUnavailableException.Reason.DOWN,
				"Redis Cluster master " + master + " serves no slot", new IllegalStateException(), master);
	}

	/**
	 * Returns the distinct masters of a cluster that serve a call's keys, by the topology
	 * last read; none for Redis that is no cluster, or when a key's master is not known.
	 */
	@Override
	public List<String> partsOf(List<KeyedLimit> limits) {
		if (!isClusterKnown()) {
			return List.of();
		}
		if (limits.size() == 1) {
			String master = this.runner.nodeOf(RedisKeys.slot(this.keys.key(limits.get(0))));
			return (master != null) ? List.of(master) : List.of();
		}
		List<String> masters = new ArrayList<>(2);
		for (KeyedLimit limit : limits) {
			String master = this.runner.nodeOf(RedisKeys.slot(this.keys.key(limit)));
			if (master == null) {
				return List.of();
			}
			if (!masters.contains(master)) {
				masters.add(master);
			}
		}
		return masters;
	}

	/**
	 * Returns the masters of a cluster that serve slots, by the topology last read.
	 */
	@Override
	public List<String> parts() {
		if (!isClusterKnown()) {
			return List.of();
		}
		List<ScriptRunner.Master> masters = this.runner.masters();
		List<String> parts = new ArrayList<>(masters.size());
		for (ScriptRunner.Master master : masters) {
			parts.add(master.nodeId());
		}
		return parts;
	}

	/**
	 * Returns the masters of a cluster that serve slots, with their slots, by the
	 * topology last read; empty for Redis that is no cluster.
	 */
	List<ScriptRunner.Master> masters() {
		return isClusterKnown() ? this.runner.masters() : List.of();
	}

	/**
	 * Returns whether Redis is a cluster whose masters the runner tells apart.
	 */
	private boolean isClusterKnown() {
		return this.runner.tellsMastersApart();
	}

	@Override
	public boolean isConnected() {
		return this.runner.isConnected();
	}

	@Override
	public void reconnectIfClosed() {
		this.runner.reconnectIfClosed();
	}

	private void report(Throwable failure) {
		// what failed, not the future's wrapper: the listener tags metrics with its class
		Throwable ex = cause(failure);
		if (logger.isDebugEnabled()) {
			logger.debug("Redis rate limiter call failed", ex);
		}
		try {
			this.failureListener.accept(ex);
		}
		catch (RuntimeException listenerFailure) {
			logger.warn("Rate limiter failure listener threw", listenerFailure);
		}
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
		KeyedLimit.requireOneLimitPerName(limits);
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
	 * Gives back the concurrency permits of a decision Redis allowed, waiting for each
	 * removal at most the timeout, so that a call made after it sees the permit back. A
	 * failure is reported to the failure listener, never thrown; the permit then lapses
	 * after its lease time.
	 */
	@Override
	public void release(Decision decision) {
		release(decision, true);
	}

	@Override
	public void releaseWithoutWaiting(Decision decision) {
		release(decision, false);
	}

	/**
	 * Gives back the concurrency permits of a decision Redis allowed as {@link #release}
	 * does, without blocking: the future completes once every removal is answered, or
	 * when the timeout has passed (a late answer still releases the permit), and never
	 * exceptionally: a failure is reported to the failure listener.
	 */
	@Override
	public CompletableFuture<Void> releaseAsync(Decision decision) {
		if (decision.leases().isEmpty() || decision.source() != Decision.Source.BACKEND) {
			return CompletableFuture.completedFuture(null);
		}
		long deadline = System.nanoTime() + this.timeoutNanos;
		List<Lease> leases = decision.leases();
		CompletableFuture<?>[] removals = new CompletableFuture<?>[leases.size()];
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			CompletableFuture<?> removed;
			try {
				removed = this.runner.removeMember(bytes(this.keys.key(lease.target())),
						leaseMember(lease.id(), lease.cost()));
			}
			catch (RuntimeException ex) {
				removed = CompletableFuture.failedFuture(ex);
			}
			removals[i] = removed.whenComplete((result, ex) -> {
				if (ex != null) {
					report(ex);
				}
			});
		}
		return DeadlineTimer.bound(CompletableFuture.allOf(removals), deadline).handle((result, ex) -> null);
	}

	private void release(Decision decision, boolean wait) {
		if (decision.leases().isEmpty() || decision.source() != Decision.Source.BACKEND) {
			return;
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
				if (!interrupted && wait) {
					// a late answer still releases it
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
	 * Renews the concurrency leases of a decision Redis allowed: one script call per
	 * lease, sent without waiting (nobody reads the answer, and a renewal must not hold
	 * up the next), at most {@value RedisRateLimiter#MAX_UNANSWERED} unanswered at a
	 * time. Nothing is sent while the connection is closed; a renewal that fails is
	 * logged at debug level and not reported as a failure (no call is decided by it):
	 * should renewals fail for a whole lease time, the lease lapses in Redis.
	 */
	@Override
	public void renew(Decision decision) {
		if (decision.leases().isEmpty() || decision.source() != Decision.Source.BACKEND || !this.runner.isConnected()) {
			return;
		}
		String time = timeArgument();
		for (Lease lease : decision.leases()) {
			if (this.renewalsUnanswered.incrementAndGet() > RedisRateLimiter.MAX_UNANSWERED) {
				this.renewalsUnanswered.decrementAndGet();
				return;
			}
			SlotPlan plan = new SlotPlan(List.of(lease.target()), this.keys);
			String[] member = { lease.id() + ":" + lease.cost() };
			CompletableFuture<?> sent;
			try {
				sent = this.runner.evalAsync(keyBytes(plan, new int[] { 0 }),
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
	 * Deletes a keyed limit's state in Redis and its permit reservoir, and the penalty of
	 * its policy and client key.
	 * @throws DataAccessResourceFailureException or {@link QueryTimeoutException} if
	 * Redis fails
	 */
	@Override
	public void reset(KeyedLimit limit) {
		String key = this.keys.key(limit);
		if (this.reservoirs != null) {
			this.reservoirs.forget(limit);
		}
		try {
			long deadline = System.nanoTime() + this.timeoutNanos;
			this.runner.delete(bytes(key), deadline);
			this.runner.delete(bytes(this.keys.penaltyKey(limit)), deadline);
		}
		catch (Exception ex) {
			throw backendException("reset rate-limit state in Redis", ex);
		}
	}

	/**
	 * Deletes every key of this limiter's prefix in Redis (on every master of a cluster),
	 * then its permit reservoirs.
	 * @throws DataAccessResourceFailureException if Redis fails
	 */
	@Override
	public void resetAll() {
		try {
			RedisStateReset.delete(this.connectionFactory, this.keys.pattern());
		}
		catch (RuntimeException ex) {
			throw backendException("reset all rate-limit state in Redis", ex);
		}
		finally {
			if (this.reservoirs != null) {
				this.reservoirs.forgetAll();
			}
		}
	}

	/**
	 * Turns a failure into the exception a caller of {@link #inspect}, {@link #reset} or
	 * a health check gets: the cause a {@link BackendUnavailableException} carries.
	 */
	RuntimeException backendException(String action, Exception failure) {
		Exception ex = (failure instanceof BackendUnavailableException unavailable
				&& unavailable.getCause() instanceof Exception cause) ? cause : failure;
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		if (ex instanceof TimeoutException) {
			return new QueryTimeoutException("Could not " + action + ": no answer within " + this.timeout, ex);
		}
		return new DataAccessResourceFailureException("Could not " + action + ": " + ex.getMessage(), ex);
	}

	/**
	 * Lets the give-backs still on their way land, for one timeout at most (they would be
	 * lost with the connection), then closes the connection; the factory stays open.
	 */
	@Override
	public void close() {
		awaitCompensations(Duration.ofNanos(this.timeoutNanos));
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

}
