package dev.ratelimit.core.failure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

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

/**
 * A {@link RateLimiter} that decides calls through another one, a remote store, and by a
 * {@link FailureMode} and this instance's own limits when that store answers late or
 * fails. docs/ARCHITECTURE.md ("The failure policy") gives the states and the reasons.
 */
public final class FailurePolicyRateLimiter implements RateLimiter, AutoCloseable {

	/*
	 * Late (no answer in time, the connection up): the store still runs the call, and
	 * this instance may itself be the slow part (a busy CPU reads answers late), so a
	 * late call is never let through unlimited. It is decided by this instance's own
	 * limits, which every call the store allowed was also charged to (or refused in
	 * DENY). For a cool-down calls are then decided here at once and sent to the store
	 * without waiting, so that it still counts them; then one call at a time waits for
	 * the store again (the gate's probe), and an answer in time ends it.
	 *
	 * Down (an error, a refused or lost connection): every call is decided by the failure
	 * mode at once. A background check replaces a closed connection and tries a real
	 * write every recovery check interval; its first success brings calls back. An
	 * interrupted caller is not a failure of the store: it is decided here alone, its
	 * interrupt flag set.
	 *
	 * An asynchronous call (acquireAsync) takes the same routes without waiting: what
	 * needs no answer is decided on the calling thread, the store's answer or failure in
	 * the callback that receives it. It enters the gate with a token of its own rather
	 * than its thread, so that it can be the probe and give the probe back from the
	 * thread its answer comes on.
	 *
	 * A store whose parts fail apart (the masters of a Redis Cluster) has a gate per
	 * part: a call enters the gates of the parts its limits live on, a failure is held
	 * against the part that failed, and each part late or down is probed on its own. So
	 * one master down leaves the calls of the others to the store. A call on several
	 * parts is routed by the worst of them: the failure mode decides it if any is down,
	 * this instance if any is late.
	 *
	 * A check from outside (the health indicator's) learns as a call does, but ends no
	 * late state: only the limiter's own probe does, once the cool-down has passed, so
	 * that a health endpoint polled hard cannot cut a cool-down short.
	 */

	private static final Log logger = LogFactory.getLog(FailurePolicyRateLimiter.class);

	private final RemoteRateLimiter backend;

	private final FailureMode failureMode;

	/**
	 * This instance's own limits, or {@code null} in {@link FailureMode#DENY}: they
	 * decide a call that the store answers late (in every other mode), and every call
	 * while it is down in {@link FailureMode#LOCAL}. Every call that the store allows is
	 * also charged here, so that they know what this instance let through.
	 */
	private final @Nullable RateLimiter local;

	private final BackendGates gates;

	private final long recoveryCheckMicros;

	private final ScheduledExecutorService recovery;

	/**
	 * The concurrency permits this instance's own limits hold for decisions the store
	 * allowed, released and renewed with them; a decision dropped without a release takes
	 * its entry with it (weak keys, compared by identity, as {@link Decision} has no
	 * equals).
	 */
	private final Map<Decision, List<Decision>> permitsHere = Collections.synchronizedMap(new WeakHashMap<>());

	private final Consumer<Throwable> failureListener;

	private FailurePolicyRateLimiter(Builder builder) {
		this.backend = builder.backend;
		this.failureMode = builder.failureMode;
		RateLimiter local = builder.localFallback;
		if (local == null && builder.failureMode != FailureMode.DENY) {
			local = InMemoryRateLimiter.builder().timeSource(builder.timeSource).build();
		}
		this.local = (builder.failureMode != FailureMode.DENY) ? local : null;
		this.gates = new BackendGates(builder.coolDown.toNanos(), builder.nanoTime);
		this.recoveryCheckMicros = builder.recoveryCheckInterval.toNanos() / 1000;
		this.failureListener = builder.failureListener;
		this.recovery = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, builder.threadName);
			thread.setDaemon(true);
			return thread;
		});
		long interval = builder.recoveryCheckInterval.toNanos();
		this.recovery.scheduleWithFixedDelay(this::checkWhileUnusable, interval, interval, TimeUnit.NANOSECONDS);
	}

	/**
	 * Starts a failure policy over a remote limiter.
	 * @param backend the limiter that keeps the state
	 * @return a builder
	 */
	public static Builder builder(RemoteRateLimiter backend) {
		return new Builder(Objects.requireNonNull(backend, "backend must not be null"));
	}

	/**
	 * Starts a failure policy over any limiter: a failure whose cause is a
	 * {@link TimeoutException} counts as late, any other as down, and its health check is
	 * a call of cost 1 against a key no other call uses.
	 * @param backend the limiter that keeps the state
	 * @return a builder
	 */
	public static Builder builder(RateLimiter backend) {
		Objects.requireNonNull(backend, "backend must not be null");
		return new Builder((backend instanceof RemoteRateLimiter remote) ? remote : new PlainBackend(backend));
	}

	/**
	 * Returns what this limiter does when the store fails.
	 * @return the failure mode
	 */
	public FailureMode failureMode() {
		return this.failureMode;
	}

	/**
	 * Returns whether the store is usable: not down since an error or a lost connection
	 * (it may answer late); {@code true} before the first call. For a store whose parts
	 * fail apart, whether no part is down.
	 * @return the last known reachability
	 */
	public boolean isAvailable() {
		return !this.gates.anyDown();
	}

	/**
	 * Returns what this limiter knows of the store: for a store whose parts fail apart,
	 * the worst state of any part ({@link #state(String)} tells each).
	 * @return the state
	 */
	public BackendState state() {
		return this.gates.worst();
	}

	/**
	 * Returns what this limiter knows of one part of the store (see
	 * {@link RemoteRateLimiter#parts()}): up until a call or a check on it fails.
	 * @param part the part
	 * @return the state
	 */
	public BackendState state(String part) {
		BackendGate gate = this.gates.part(Objects.requireNonNull(part, "part must not be null"));
		return (gate != null) ? gate.state() : BackendState.UP;
	}

	/**
	 * Checks the store with a real write ({@link RemoteRateLimiter#check()}), or each of
	 * its parts ({@link RemoteRateLimiter#check(String)}), as a health check does: a late
	 * answer starts a late state, any other failure a down one, and a success ends a down
	 * state. A success ends no late state: its cool-down holds, and only this limiter's
	 * own probe ends it once the cool-down has passed.
	 * @throws RuntimeException the check's failure (the first part's that failed, with
	 * the others' suppressed)
	 */
	public void check() {
		List<String> parts = this.backend.parts();
		if (parts.isEmpty()) {
			check(null, this.gates.whole());
			return;
		}
		RuntimeException failure = null;
		for (String part : parts) {
			try {
				check(part, this.gates.of(part));
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	private void check(@Nullable String part, BackendGate gate) {
		try {
			if (part == null) {
				this.backend.check();
			}
			else {
				this.backend.check(part);
			}
			gate.answered();
		}
		catch (RuntimeException ex) {
			if (Thread.currentThread().isInterrupted()) {
				// an interrupted caller learned nothing about the store
				throw ex;
			}
			if (isLate(ex)) {
				gate.late(Thread.currentThread());
			}
			else {
				gate.failed(Thread.currentThread());
			}
			throw ex;
		}
	}

	@Override
	public Decision acquire(List<KeyedLimit> limits, long cost) {
		checkCost(cost);
		if (limits.isEmpty()) {
			return Decision.unlimited();
		}
		// a caller's mistake, before the store could be blamed for it
		KeyedLimit.requireOneLimitPerName(limits);
		Decision withoutAsking;
		try {
			withoutAsking = this.backend.decideWithoutAsking(limits, cost, this.gates.allUp());
		}
		catch (BackendUnavailableException ex) {
			return busy(ex, limits, cost);
		}
		if (withoutAsking != null) {
			chargeHere(limits, cost, withoutAsking);
			return withoutAsking;
		}
		Thread caller = Thread.currentThread();
		List<BackendGate> gates = this.gates.of(this.backend.partsOf(limits));
		BackendGate.Route route = BackendGates.enter(gates, caller);
		if (route != BackendGate.Route.ASK) {
			return decidePast(route, gates, limits, cost);
		}
		if (caller.isInterrupted()) {
			// a caller that cannot wait for the answer sends nothing, which the store
			// would apply all the same
			BackendGates.abandoned(gates, caller);
			return decideHere(gates, limits, cost);
		}
		try {
			Decision decision = this.backend.acquire(limits, cost);
			BackendGates.succeeded(gates, caller);
			chargeHere(limits, cost, decision);
			return decision;
		}
		catch (RuntimeException ex) {
			if (caller.isInterrupted()) {
				// the caller's thread was interrupted while it waited: the store did not
				// fail, so this call alone is decided here
				BackendGates.abandoned(gates, caller);
				return decideHere(gates, limits, cost);
			}
			return failed(ex, gates, limits, cost, caller);
		}
		catch (Error ex) {
			BackendGates.abandoned(gates, caller);
			throw ex;
		}
	}

	/**
	 * Decides a call as {@link #acquire} does, without blocking the calling thread. A
	 * call the store need not answer (permits held here, a store late or down) is decided
	 * at once on the calling thread; a call that asks the store is decided in the
	 * callback of the store's answer, on the thread that completes it (for Redis, a
	 * Lettuce thread, or the timer that ends a call at its timeout). An asynchronous call
	 * may be the probe of a late store: its answer, wherever it comes, ends the late
	 * state or gives the probe back. Interrupts play no part.
	 */
	@Override
	public CompletableFuture<Decision> acquireAsync(List<KeyedLimit> limits, long cost) {
		try {
			checkCost(cost);
			if (limits.isEmpty()) {
				return CompletableFuture.completedFuture(Decision.unlimited());
			}
			KeyedLimit.requireOneLimitPerName(limits);
			return this.backend.decideWithoutAskingAsync(limits, cost, this.gates.allUp())
				.handle((withoutAsking, ex) -> acquireAfterReservoir(withoutAsking, ex, limits, cost))
				.thenCompose(Function.identity());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private CompletableFuture<Decision> acquireAfterReservoir(@Nullable Decision withoutAsking,
			@Nullable Throwable failure, List<KeyedLimit> limits, long cost) {
		if (failure != null) {
			Throwable cause = unwrap(failure);
			if (cause instanceof BackendUnavailableException unavailable) {
				return CompletableFuture.completedFuture(busy(unavailable, limits, cost));
			}
			return CompletableFuture.failedFuture(cause);
		}
		if (withoutAsking != null) {
			chargeHere(limits, cost, withoutAsking);
			return CompletableFuture.completedFuture(withoutAsking);
		}
		// the probe, if this call is one, is this call's and not its thread's: the answer
		// comes on another
		Object caller = new Object();
		List<BackendGate> gates = this.gates.of(this.backend.partsOf(limits));
		BackendGate.Route route = BackendGates.enter(gates, caller);
		if (route != BackendGate.Route.ASK) {
			return CompletableFuture.completedFuture(decidePast(route, gates, limits, cost));
		}
		CompletableFuture<Decision> asked;
		try {
			asked = this.backend.acquireAsync(limits, cost);
		}
		catch (RuntimeException ex) {
			asked = CompletableFuture.failedFuture(ex);
		}
		catch (Error ex) {
			BackendGates.abandoned(gates, caller);
			throw ex;
		}
		return asked.handle((decision, ex) -> answered(decision, ex, gates, limits, cost, caller));
	}

	/**
	 * Decides an asynchronous call from the store's answer, or its failure.
	 */
	private Decision answered(@Nullable Decision decision, @Nullable Throwable failure, List<BackendGate> gates,
			List<KeyedLimit> limits, long cost, Object caller) {
		if (failure == null) {
			BackendGates.succeeded(gates, caller);
			Decision answer = Objects.requireNonNull(decision, "the store answered no decision");
			chargeHere(limits, cost, answer);
			return answer;
		}
		Throwable cause = unwrap(failure);
		if (cause instanceof Error error) {
			BackendGates.abandoned(gates, caller);
			throw error;
		}
		return failed(cause, gates, limits, cost, caller);
	}

	private static void checkCost(long cost) {
		if (cost < 0) {
			throw new IllegalArgumentException("cost must be at least 0 (was " + cost + ")");
		}
	}

	/**
	 * Decides a call that the store's state here could not serve: {@code BUSY} (another
	 * call for the same state is asking the store, which it reports should the store
	 * fail) is decided here; any other failure is the caller's.
	 */
	private Decision busy(BackendUnavailableException ex, List<KeyedLimit> limits, long cost) {
		if (ex.reason() != BackendUnavailableException.Reason.BUSY) {
			throw ex;
		}
		return decideHere(this.gates.of(this.backend.partsOf(limits)), limits, cost);
	}

	/**
	 * Decides a call that the gate sends past the store: by the failure mode while it is
	 * down; here while it is late, sent to the store without waiting if allowed.
	 */
	private Decision decidePast(BackendGate.Route route, List<BackendGate> gates, List<KeyedLimit> limits, long cost) {
		if (route == BackendGate.Route.DOWN) {
			return fallback(gates, limits, cost);
		}
		Decision here = decideHere(gates, limits, cost);
		if (here.isAllowed() && cost > 0) {
			this.backend.send(limits, cost);
		}
		return here;
	}

	private Decision failed(Throwable ex, List<BackendGate> gates, List<KeyedLimit> limits, long cost, Object caller) {
		if (reasonOf(ex) == BackendUnavailableException.Reason.BUSY) {
			// another call for the same state holds it, or the caller's thread was
			// interrupted: the store did not fail, so this call alone is decided here
			BackendGates.abandoned(gates, caller);
			return decideHere(gates, limits, cost);
		}
		// the listener hears of the store's own failure, which a backend that says why
		// carries as the cause
		report((ex instanceof BackendUnavailableException && ex.getCause() != null) ? ex.getCause() : ex);
		// the part that failed is judged; the call's other parts learned nothing
		List<BackendGate> judged = judged(ex, gates);
		for (BackendGate gate : gates) {
			if (!judged.contains(gate)) {
				gate.abandoned(caller);
			}
		}
		if (isLate(ex)) {
			// Late, not gone: the store still runs the call (so it counts there), and a
			// busy instance reads answers late whatever the store does. Letting calls
			// through unlimited would turn load into a bypass: decide here.
			judged.forEach((gate) -> gate.late(caller));
			return decideHere(judged, limits, cost);
		}
		judged.forEach((gate) -> gate.failed(caller));
		return fallback(judged, limits, cost);
	}

	/**
	 * Returns the gates a failure is held against: the part it names, else every part of
	 * the call.
	 */
	private List<BackendGate> judged(Throwable ex, List<BackendGate> gates) {
		String part = (ex instanceof BackendUnavailableException unavailable) ? unavailable.part() : null;
		return (part != null) ? List.of(this.gates.of(part)) : gates;
	}

	/**
	 * Returns the failure a future completed with, without the wrappers a chain of
	 * futures adds.
	 */
	private static Throwable unwrap(Throwable ex) {
		Throwable current = ex;
		while ((current instanceof CompletionException || current instanceof ExecutionException)
				&& current.getCause() != null) {
			current = current.getCause();
		}
		return current;
	}

	private static BackendUnavailableException.@Nullable Reason reasonOf(Throwable ex) {
		return (ex instanceof BackendUnavailableException unavailable) ? unavailable.reason() : null;
	}

	/**
	 * Returns whether a failure is a late answer: so said by the backend, or, from a
	 * limiter that does not say, a {@link TimeoutException} among its causes.
	 */
	private static boolean isLate(Throwable ex) {
		BackendUnavailableException.Reason reason = reasonOf(ex);
		if (reason != null) {
			return reason == BackendUnavailableException.Reason.LATE;
		}
		for (Throwable current = ex; current != null; current = current.getCause()) {
			if (current instanceof TimeoutException) {
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
	private Decision decideHere(List<BackendGate> gates, List<KeyedLimit> limits, long cost) {
		RateLimiter here = this.local;
		if (here == null) {
			return Decision.unavailable(false, BackendGates.unusableForMicros(gates, this.recoveryCheckMicros));
		}
		return here.acquire(limits, cost).from(Decision.Source.LOCAL_FALLBACK);
	}

	/**
	 * Decides a call while the store is down, by the failure mode.
	 */
	private Decision fallback(List<BackendGate> gates, List<KeyedLimit> limits, long cost) {
		return switch (this.failureMode) {
			case ALLOW -> Decision.unavailable(true, 0);
			case DENY, LOCAL -> decideHere(gates, limits, cost);
		};
	}

	/**
	 * Charges this instance's own limits with a call that the store allowed, so that,
	 * should the store answer late, they know what this instance has let through. Each
	 * distinct limit is charged once and on its own (a limit already spent here keeps the
	 * others counting). A concurrency limit takes a permit here too, which is kept with
	 * the decision and released and renewed with it.
	 */
	private void chargeHere(List<KeyedLimit> limits, long cost, Decision decision) {
		RateLimiter here = this.local;
		if (here == null || cost == 0 || !decision.isAllowed()) {
			return;
		}
		List<Decision> held = null;
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit limit = limits.get(i);
			if (limits.subList(0, i).contains(limit)) {
				continue;
			}
			Decision charged = here.acquire(limit, cost);
			if (!charged.leases().isEmpty()) {
				if (held == null) {
					held = new ArrayList<>(1);
				}
				held.add(charged);
			}
		}
		if (held != null) {
			this.permitsHere.put(decision, held);
		}
	}

	private void report(Throwable ex) {
		if (logger.isDebugEnabled()) {
			logger.debug("Rate limiter backend call failed; applying failure mode " + this.failureMode, ex);
		}
		try {
			this.failureListener.accept(ex);
		}
		catch (RuntimeException listenerFailure) {
			logger.warn("Rate limiter failure listener threw", listenerFailure);
		}
	}

	/**
	 * Every recovery check interval, while the store (or any part of it) is not up:
	 * replaces a closed connection, and forgets the parts the store no longer has. For
	 * each part down, and each part late whose cool-down has passed, it also tries a
	 * health write on that part, whose first success in time brings its calls back (no
	 * caller waits for these checks, and a late state ends even with no call to probe
	 * it); a late state is not ended before its cool-down has passed.
	 */
	void checkWhileUnusable() {
		if (this.gates.allUp()) {
			return;
		}
		try {
			this.backend.reconnectIfClosed();
			List<String> parts = this.backend.parts();
			if (!parts.isEmpty()) {
				this.gates.retain(parts);
			}
		}
		catch (Throwable ex) {
			traceStillDown(ex);
		}
		this.gates.forEach(this::checkIfUnusable);
	}

	private void checkIfUnusable(@Nullable String part, BackendGate gate) {
		if (!gate.isDown() && !gate.isLateAndCooledDown()) {
			return;
		}
		try {
			if (part == null) {
				this.backend.check();
			}
			else {
				this.backend.check(part);
			}
			gate.recovered();
		}
		catch (Throwable ex) {
			traceStillDown(ex);
		}
	}

	/**
	 * Still down: the next check tries again; a check is not a call, so it is not
	 * reported as a failure.
	 */
	private static void traceStillDown(Throwable ex) {
		if (logger.isTraceEnabled()) {
			logger.trace("Rate limiter backend is still down", ex);
		}
	}

	/**
	 * Returns each limit's state in the store, which throws if it fails.
	 */
	@Override
	public List<LimitStatus> inspect(List<KeyedLimit> limits) {
		KeyedLimit.requireOneLimitPerName(limits);
		return this.backend.inspect(limits);
	}

	/**
	 * Gives back permits of an allowed decision where it took them: a decision of this
	 * instance's own limits to them; a decision of the store to the store (nothing is
	 * sent while it is down: they stay spent there) and to this instance's own limits,
	 * which were charged with it. They get it with the store's marks, which name the same
	 * windows as theirs while the clocks agree; a log entry, timed by the store's clock,
	 * stays spent here.
	 */
	@Override
	public void refund(Decision decision, List<KeyedLimit> limits, long cost) {
		if (decision.source() == Decision.Source.LOCAL_FALLBACK) {
			refundHere(decision, limits, cost);
			return;
		}
		if (decision.source() != Decision.Source.BACKEND) {
			return;
		}
		refundHere(this.backend.forLocalRefund(decision, cost), limits, cost);
		if (isDown(limits)) {
			return;
		}
		if (isLate(limits)) {
			// the store answers late: sent without waiting for it, as calls are meanwhile
			this.backend.refundAsync(decision, limits, cost);
			return;
		}
		try {
			this.backend.refund(decision, limits, cost);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not give back the permits of a call", ex);
		}
	}

	/**
	 * Gives back permits of an allowed decision as {@link #refund} does, without blocking
	 * the calling thread; it never completes exceptionally (the store reports its own
	 * failures).
	 */
	@Override
	public CompletableFuture<Void> refundAsync(Decision decision, List<KeyedLimit> limits, long cost) {
		try {
			if (decision.source() != Decision.Source.BACKEND) {
				refund(decision, limits, cost);
				return CompletableFuture.completedFuture(null);
			}
			refundHere(this.backend.forLocalRefund(decision, cost), limits, cost);
			if (isDown(limits)) {
				return CompletableFuture.completedFuture(null);
			}
			return this.backend.refundAsync(decision, limits, cost).exceptionally((ex) -> null);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not give back the permits of a call", ex);
			return CompletableFuture.completedFuture(null);
		}
	}

	/**
	 * Returns whether a part of the store that holds one of these limits answers late.
	 */
	private boolean isLate(List<KeyedLimit> limits) {
		for (BackendGate gate : this.gates.of(this.backend.partsOf(limits))) {
			if (!gate.isUp()) {
				return true;
			}
		}
		return false;
	}

	private void refundHere(Decision decision, List<KeyedLimit> limits, long cost) {
		RateLimiter here = this.local;
		if (here != null && cost > 0) {
			try {
				here.refund(decision, limits, cost);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not give back the permits of a call to this instance's own limits", ex);
			}
		}
	}

	/**
	 * Gives back the concurrency permits of an allowed decision, where it was decided: in
	 * the store (without waiting while it is down) and here.
	 */
	@Override
	public void release(Decision decision) {
		if (!releaseHere(decision)) {
			return;
		}
		if (isDown(decision)) {
			this.backend.releaseWithoutWaiting(decision);
		}
		else {
			this.backend.release(decision);
		}
	}

	/**
	 * Gives back the concurrency permits of an allowed decision as {@link #release} does,
	 * without blocking the calling thread: those held here at once, those in the store
	 * through its asynchronous release (sent without waiting while it is down). The
	 * future completes once the store has answered, as far as it waits for that.
	 */
	@Override
	public CompletableFuture<Void> releaseAsync(Decision decision) {
		try {
			if (!releaseHere(decision)) {
				return CompletableFuture.completedFuture(null);
			}
			if (isDown(decision)) {
				this.backend.releaseWithoutWaiting(decision);
				return CompletableFuture.completedFuture(null);
			}
			return this.backend.releaseAsync(decision);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Returns whether any part of the store that holds a decision's permits is down.
	 */
	private boolean isDown(Decision decision) {
		if (!this.gates.anyDown()) {
			return false;
		}
		List<KeyedLimit> targets = new ArrayList<>(decision.leases().size());
		for (Lease lease : decision.leases()) {
			targets.add(lease.target());
		}
		return isDown(targets);
	}

	/**
	 * Returns whether a part of the store that holds one of these limits is down.
	 */
	private boolean isDown(List<KeyedLimit> targets) {
		if (!this.gates.anyDown()) {
			return false;
		}
		for (BackendGate gate : this.gates.of(this.backend.partsOf(targets))) {
			if (gate.isDown()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Gives back the permits this instance holds for a decision.
	 * @return whether the store holds permits of it too
	 */
	private boolean releaseHere(Decision decision) {
		if (decision.leases().isEmpty()) {
			return false;
		}
		if (decision.source() == Decision.Source.LOCAL_FALLBACK) {
			if (this.local != null) {
				this.local.release(decision);
			}
			return false;
		}
		if (decision.source() != Decision.Source.BACKEND) {
			return false;
		}
		List<Decision> here = this.permitsHere.remove(decision);
		if (here != null) {
			here.forEach(Objects.requireNonNull(this.local)::release);
		}
		return true;
	}

	/**
	 * Renews the concurrency leases of an allowed decision, where it was decided; nothing
	 * is sent to the store while it is down.
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
		if (!isDown(decision)) {
			this.backend.renew(decision);
		}
	}

	/**
	 * Forgets a keyed limit here and in the store, which throws if it fails.
	 */
	@Override
	public void reset(KeyedLimit limit) {
		if (this.local != null) {
			this.local.reset(limit);
		}
		this.backend.reset(limit);
	}

	/**
	 * Forgets every keyed limit here (this instance's own limits, and the permits they
	 * hold for calls the store allowed) and in the store, which throws if it fails.
	 */
	@Override
	public void resetAll() {
		if (this.local != null) {
			this.local.resetAll();
		}
		this.permitsHere.clear();
		this.backend.resetAll();
	}

	/**
	 * Stops the recovery checks; the backend is closed by its owner.
	 */
	@Override
	public void close() {
		this.recovery.shutdownNow();
	}

	/**
	 * Builds a {@link FailurePolicyRateLimiter}.
	 */
	public static final class Builder {

		private final RemoteRateLimiter backend;

		private FailureMode failureMode = FailureMode.ALLOW;

		private @Nullable RateLimiter localFallback;

		private Duration coolDown = Duration.ofSeconds(1);

		private Duration recoveryCheckInterval = Duration.ofMillis(200);

		private Consumer<Throwable> failureListener = (ex) -> {
		};

		private TimeSource timeSource = TimeSource.system();

		private LongSupplier nanoTime = System::nanoTime;

		private String threadName = "ratelimit-recovery";

		private Builder(RemoteRateLimiter backend) {
			this.backend = backend;
		}

		/**
		 * Sets what happens to a call when the store fails; default
		 * {@link FailureMode#ALLOW}.
		 * @param failureMode the failure mode
		 * @return this builder
		 */
		public Builder failureMode(FailureMode failureMode) {
			this.failureMode = Objects.requireNonNull(failureMode, "failureMode must not be null");
			return this;
		}

		/**
		 * Sets this instance's own limiter: it decides calls that the store answers late
		 * (unless the failure mode is {@link FailureMode#DENY}, which refuses them), and
		 * every call while the store is down in {@link FailureMode#LOCAL}; every call the
		 * store allows is charged to it too. Default: a new {@link InMemoryRateLimiter}
		 * (none in {@link FailureMode#DENY}).
		 * @param localFallback the local limiter
		 * @return this builder
		 */
		public Builder localFallback(RateLimiter localFallback) {
			this.localFallback = Objects.requireNonNull(localFallback, "localFallback must not be null");
			return this;
		}

		/**
		 * Sets how long calls are decided here after a late answer; default 1s.
		 * @param coolDown the cool-down, zero or positive
		 * @return this builder
		 */
		public Builder coolDown(Duration coolDown) {
			Objects.requireNonNull(coolDown, "coolDown must not be null");
			if (coolDown.isNegative()) {
				throw new IllegalArgumentException("coolDown must be zero or positive (was " + coolDown + ")");
			}
			this.coolDown = coolDown;
			return this;
		}

		/**
		 * Sets how often a store that is down, or late past its cool-down, is checked;
		 * default 200ms.
		 * @param interval the interval, positive
		 * @return this builder
		 */
		public Builder recoveryCheckInterval(Duration interval) {
			Objects.requireNonNull(interval, "interval must not be null");
			if (interval.isNegative() || interval.isZero()) {
				throw new IllegalArgumentException("recoveryCheckInterval must be positive (was " + interval + ")");
			}
			this.recoveryCheckInterval = interval;
			return this;
		}

		/**
		 * Sets the callback told of every failed call to the store, for metrics.
		 * @param failureListener the listener
		 * @return this builder
		 */
		public Builder failureListener(Consumer<Throwable> failureListener) {
			this.failureListener = Objects.requireNonNull(failureListener, "failureListener must not be null");
			return this;
		}

		/**
		 * Sets the clock of the default local limiter; default the system clock.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * Sets the name of the recovery check's thread.
		 * @param threadName the name
		 * @return this builder
		 */
		public Builder threadName(String threadName) {
			this.threadName = Objects.requireNonNull(threadName, "threadName must not be null");
			return this;
		}

		/**
		 * For tests: the monotonic clock of the cool-down, in nanoseconds.
		 */
		Builder nanoTime(LongSupplier nanoTime) {
			this.nanoTime = nanoTime;
			return this;
		}

		/**
		 * Builds the limiter and starts its recovery checks.
		 * @return the limiter
		 */
		public FailurePolicyRateLimiter build() {
			return new FailurePolicyRateLimiter(this);
		}

	}

	/**
	 * Adapts a limiter that says nothing of its store: its health check is a call on a
	 * key of its own.
	 */
	private static final class PlainBackend implements RemoteRateLimiter {

		private static final KeyedLimit HEALTH = new KeyedLimit("ratelimit-health", "ping",
				Limit.tokenBucket("1000000/1s"));

		private final RateLimiter delegate;

		PlainBackend(RateLimiter delegate) {
			this.delegate = delegate;
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			return this.delegate.acquire(limits, cost);
		}

		@Override
		public CompletableFuture<Decision> acquireAsync(List<KeyedLimit> limits, long cost) {
			return this.delegate.acquireAsync(limits, cost);
		}

		@Override
		public CompletableFuture<Void> releaseAsync(Decision decision) {
			return this.delegate.releaseAsync(decision);
		}

		@Override
		public void refund(Decision decision, List<KeyedLimit> limits, long cost) {
			this.delegate.refund(decision, limits, cost);
		}

		@Override
		public CompletableFuture<Void> refundAsync(Decision decision, List<KeyedLimit> limits, long cost) {
			return this.delegate.refundAsync(decision, limits, cost);
		}

		@Override
		public List<LimitStatus> inspect(List<KeyedLimit> limits) {
			return this.delegate.inspect(limits);
		}

		@Override
		public void release(Decision decision) {
			this.delegate.release(decision);
		}

		@Override
		public void renew(Decision decision) {
			this.delegate.renew(decision);
		}

		@Override
		public void reset(KeyedLimit limit) {
			this.delegate.reset(limit);
		}

		@Override
		public void resetAll() {
			this.delegate.resetAll();
		}

		@Override
		public void check() {
			if (!this.delegate.acquire(HEALTH).isAllowed()) {
				throw new BackendUnavailableException(BackendUnavailableException.Reason.DOWN,
						"The health check's call was refused");
			}
		}

	}

}
