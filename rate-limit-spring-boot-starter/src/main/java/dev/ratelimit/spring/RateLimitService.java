package dev.ratelimit.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.overrides.LimitOverride;
import dev.ratelimit.spring.overrides.LimitOverrides;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The single decision path of the starter, shared by the servlet filter and the
 * {@code @RateLimited} interceptor: resolves the caller's tier, each policy's limits for
 * that tier and its key, and asks the {@link RateLimiter} for all enforced limits of the
 * call at once. Shadow policies never change the enforced decision. Thread-safe.
 */
public final class RateLimitService implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RateLimitService.class);

	private final RateLimiter limiter;

	private volatile PolicyRegistry policies;

	private volatile Instant configurationApplied;

	private final @Nullable LimitOverrides overrides;

	private final TimeSource timeSource;

	private final TierResolver tierResolver;

	private final RateLimitListeners listeners;

	private final String backend;

	private final LeaseRenewals renewals;

	/** Whether the limiter gives permits back ({@link RateLimiter#refund}). */
	private final boolean refunds;

	/**
	 * Creates the service.
	 * @param limiter the limiter that decides
	 * @param policies the configured policies
	 * @param tierResolver the resolver of a caller's tier
	 * @param listeners the listeners told of every decision; one that throws changes
	 * nothing (see {@link RateLimitListeners})
	 * @param backend the name of the backend, such as {@code memory} or {@code redis},
	 * for listeners
	 */
	public RateLimitService(RateLimiter limiter, PolicyRegistry policies, TierResolver tierResolver,
			List<RateLimitListener> listeners, String backend) {
		this(limiter, policies, tierResolver, listeners, backend, null, TimeSource.system());
	}

	/**
	 * Creates the service with per-client overrides.
	 * @param limiter the limiter that decides
	 * @param policies the configured policies
	 * @param tierResolver the resolver of a caller's tier
	 * @param listeners the listeners told of every decision; one that throws changes
	 * nothing (see {@link RateLimitListeners})
	 * @param backend the name of the backend, such as {@code memory} or {@code redis},
	 * for listeners
	 * @param overrides the overrides whose limits replace a client's tier limits, or
	 * {@code null} for none
	 * @param timeSource the clock that decides when an override has expired
	 */
	public RateLimitService(RateLimiter limiter, PolicyRegistry policies, TierResolver tierResolver,
			List<RateLimitListener> listeners, String backend, @Nullable LimitOverrides overrides,
			TimeSource timeSource) {
		this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
		this.policies = Objects.requireNonNull(policies, "policies must not be null");
		this.configurationApplied = Instant.now();
		this.tierResolver = Objects.requireNonNull(tierResolver, "tierResolver must not be null");
		this.listeners = new RateLimitListeners(listeners);
		this.backend = Objects.requireNonNull(backend, "backend must not be null");
		this.overrides = overrides;
		this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
		this.renewals = new LeaseRenewals(limiter);
		this.refunds = refunds(limiter);
		throwIfReservesWithoutRefunds(policies);
	}

	/**
	 * Creates the service with the scheduler of its lease renewals, for tests.
	 */
	RateLimitService(RateLimiter limiter, PolicyRegistry policies, TierResolver tierResolver,
			List<RateLimitListener> listeners, String backend, Supplier<ScheduledExecutorService> renewalScheduler) {
		this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
		this.policies = Objects.requireNonNull(policies, "policies must not be null");
		this.configurationApplied = Instant.now();
		this.tierResolver = Objects.requireNonNull(tierResolver, "tierResolver must not be null");
		this.listeners = new RateLimitListeners(listeners);
		this.backend = Objects.requireNonNull(backend, "backend must not be null");
		this.overrides = null;
		this.timeSource = TimeSource.system();
		this.renewals = new LeaseRenewals(limiter, renewalScheduler);
		this.refunds = refunds(limiter);
	}

	/**
	 * Returns whether a limiter gives permits back: an application's own may not
	 * implement {@link RateLimiter#refund}, whose default refuses. Asked with a refund of
	 * nothing, which no limiter that does implement it sends anywhere.
	 */
	private static boolean refunds(RateLimiter limiter) {
		try {
			limiter.refund(Decision.unlimited(), List.of(), 0);
			return true;
		}
		catch (UnsupportedOperationException ex) {
			return false;
		}
		catch (RuntimeException ex) {
			// it implements refund, and failed for its own reasons
			return true;
		}
	}

	/**
	 * Returns the problems of a configuration that this service's limiter cannot serve: a
	 * {@code count-if} policy that reserves its cost needs a limiter that gives it back,
	 * else every success would count.
	 * @param policies the policies
	 * @return the problems, none when the configuration can be served
	 */
	public List<RateLimitConfigurationException.Problem> problemsWith(PolicyRegistry policies) {
		if (this.refunds) {
			return List.of();
		}
		List<RateLimitConfigurationException.Problem> problems = new ArrayList<>();
		for (Policy policy : policies.policies()) {
			if (policy.countIf() != null && policy.reservesCountIf() && !policy.isShadow()) {
				problems.add(new RateLimitConfigurationException.Problem(
						"ratelimit.policies." + policy.name() + ".count-if-mode",
						"is reserve (the default), which gives a success's permit back after its response, but the"
								+ " RateLimiter bean (" + this.limiter.getClass().getName() + ") does not implement"
								+ " refund(); implement it, or set count-if-mode: check-then-charge"));
			}
		}
		return problems;
	}

	private void throwIfReservesWithoutRefunds(PolicyRegistry policies) {
		List<RateLimitConfigurationException.Problem> problems = problemsWith(policies);
		if (!problems.isEmpty()) {
			throw new RateLimitConfigurationException(problems);
		}
	}

	/**
	 * Decides a call against the named policies, each with its own key.
	 * @param policyNames the policy names
	 * @param cost the permits the call takes
	 * @param context the call
	 * @return the result, which must be {@link #release(RateLimitResult) released} once
	 * the call ends if it holds concurrency permits (they are renewed until then)
	 * @throws IllegalArgumentException if a policy does not exist
	 */
	public RateLimitResult decide(List<String> policyNames, long cost, RateLimitContext context) {
		return decideApplied(policyNames.stream().map((name) -> AppliedPolicy.of(this.policies.get(name))).toList(),
				cost, context);
	}

	/**
	 * Decides a call against the given policies: every enforced limit together, in one
	 * call to the limiter, so that the call is charged once and a rejected call is
	 * charged nothing.
	 * @param applied the policies, with key overrides; a policy applied twice with the
	 * same key counts once
	 * @param cost the permits the call takes
	 * @param context the call
	 * @return the result, which must be {@link #release(RateLimitResult) released} once
	 * the call ends if it holds concurrency permits (they are renewed until then)
	 * @throws RateLimitEvaluationException if the key expression of an enforced policy
	 * cannot be evaluated for the call, naming its policy; nothing is charged then. A
	 * shadow policy whose key cannot be evaluated is not decided for the call (and the
	 * exception is logged at debug level), since a shadow policy never refuses a call
	 */
	public RateLimitResult decideApplied(List<AppliedPolicy> applied, long cost, RateLimitContext context) {
		return decideApplied(applied, cost, cost, context);
	}

	// Shadow policies are decided in a second call to the limiter, made only when the
	// enforced limits allowed the
	// call: a call rejected by an enforced limit takes nothing from any limit, and a
	// shadow limit that would reject
	// never blocks the call.
	/**
	 * Decides a call against the given policies, its enforced and its shadow policies at
	 * costs of their own: every enforced limit together, in one call to the limiter, so
	 * that the call is charged once and a rejected call is charged nothing; then, if the
	 * call is allowed, the shadow limits in a second call.
	 * @param applied the policies, with key overrides; a policy applied twice with the
	 * same key counts once
	 * @param cost the permits the call takes from the enforced policies
	 * @param shadowCost the permits the call takes from the shadow policies
	 * @param context the call
	 * @return the result, which must be {@link #release(RateLimitResult) released} once
	 * the call ends if it holds concurrency permits (they are renewed until then)
	 * @throws RateLimitEvaluationException if the key expression of an enforced policy
	 * cannot be evaluated for the call, naming its policy; nothing is charged then. A
	 * shadow policy whose key cannot be evaluated is not decided for the call (and the
	 * exception is logged at debug level), since a shadow policy never refuses a call
	 */
	public RateLimitResult decideApplied(List<AppliedPolicy> applied, long cost, long shadowCost,
			RateLimitContext context) {
		if (applied.isEmpty()) {
			return RateLimitResult.unlimited();
		}
		Call call = plan(applied, context);
		long start = System.nanoTime();
		Decision decision;
		if (call.counted.isEmpty()) {
			decision = call.enforced.isEmpty() ? Decision.unlimited() : this.limiter.acquire(call.enforced, cost);
		}
		else {
			// the count-if limits first: a call they reject takes nothing from the others
			Decision checked = check(call.counted, cost);
			decision = (!checked.isAllowed() || call.enforced.isEmpty()) ? checked
					: withChecked(this.limiter.acquire(call.enforced, cost), checked);
		}
		Decision shadowDecision = (decision.isAllowed() && !call.shadow.isEmpty())
				? this.limiter.acquire(call.shadow, shadowCost) : null;
		return finish(call, decision, shadowDecision, start, cost, shadowCost, context);
	}

	/**
	 * Decides a call as {@link #decideApplied(List, long, long, RateLimitContext)} does,
	 * without blocking the calling thread on the limiter's I/O: the limiter's
	 * {@link RateLimiter#acquireAsync asynchronous} calls, one after another, so that a
	 * reactive application decides on an event loop. The tier, the keys and the costs are
	 * resolved on the calling thread, before this returns.
	 * @param applied the policies, with key overrides
	 * @param cost the permits the call takes from the enforced policies
	 * @param shadowCost the permits the call takes from the shadow policies
	 * @param context the call
	 * @return the result once decided, which must be {@link #release(RateLimitResult)
	 * released} once the call ends if it holds concurrency permits
	 * @throws RateLimitEvaluationException if the key expression of an enforced policy
	 * cannot be evaluated for the call, as the synchronous method does
	 */
	public CompletableFuture<RateLimitResult> decideAppliedAsync(List<AppliedPolicy> applied, long cost,
			long shadowCost, RateLimitContext context) {
		if (applied.isEmpty()) {
			return CompletableFuture.completedFuture(RateLimitResult.unlimited());
		}
		Call call = plan(applied, context);
		long start = System.nanoTime();
		CompletableFuture<Decision> decided;
		if (call.counted.isEmpty()) {
			decided = call.enforced.isEmpty() ? CompletableFuture.completedFuture(Decision.unlimited())
					: this.limiter.acquireAsync(call.enforced, cost);
		}
		else {
			decided = checkAsync(call.counted, cost)
				.thenCompose((checked) -> (!checked.isAllowed() || call.enforced.isEmpty())
						? CompletableFuture.completedFuture(checked) : this.limiter.acquireAsync(call.enforced, cost)
							.thenApply((acquired) -> withChecked(acquired, checked)));
		}
		if (decided.isDone() && !decided.isCompletedExceptionally() && call.shadow.isEmpty()) {
			// decided at once (in memory), with no shadow limits to ask: no stages
			return CompletableFuture
				.completedFuture(finish(call, decided.join(), null, start, cost, shadowCost, context));
		}
		return decided.thenCompose((decision) -> {
			CompletableFuture<@Nullable Decision> shadowDecided = (decision.isAllowed() && !call.shadow.isEmpty())
					? this.limiter.acquireAsync(call.shadow, shadowCost) : CompletableFuture.completedFuture(null);
			return shadowDecided.thenApply(
					(shadowDecision) -> finish(call, decision, shadowDecision, start, cost, shadowCost, context));
		});
	}

	/**
	 * What a call asks of the limiter, resolved from its policies before any limiter
	 * call: the running registry's policies, the tier, and the keyed limits, enforced,
	 * shadow and {@code count-if}.
	 */
	private static final class Call {

		final String tier;

		final List<KeyedLimit> enforced = new ArrayList<>(4);

		List<KeyedLimit> shadow = List.of();

		List<KeyedLimit> counted = List.of();

		List<ResponseCharge.Counted> countedPolicies = List.of();

		final List<Policy> used;

		final List<String> usedNames;

		Call(String tier, int policies) {
			this.tier = tier;
			this.used = new ArrayList<>(policies);
			this.usedNames = new ArrayList<>(policies);
		}

	}

	private Call plan(List<AppliedPolicy> applied, RateLimitContext context) {
		// read once, so that a reload during the call never mixes two configurations
		PolicyRegistry registry = this.policies;
		Call call = new Call(resolveTier(context, registry), applied.size());
		// a few entries each: lists with a contains check keep the order and drop repeats
		// without hashing
		for (AppliedPolicy application : applied) {
			Policy policy = current(registry, application.policy());
			List<Limit> limits = policy.limitsFor(call.tier, registry.defaultTier());
			LimitOverrides overrides = this.overrides;
			boolean overridable = overrides != null && overrides.mayOverride(policy.name());
			String key = null;
			if (!limits.isEmpty() || overridable) {
				key = keyOf(policy, application.keyOverride(), context);
				if (key == null) {
					// a shadow policy whose key cannot be evaluated for this call:
					// neither decided nor reported
					continue;
				}
				if (overridable) {
					limits = overridden(overrides, policy, key, limits);
				}
			}
			if (!call.usedNames.contains(policy.name())) {
				call.used.add(policy);
				call.usedNames.add(policy.name());
			}
			if (key == null) {
				continue;
			}
			RateLimitCondition countIf = policy.isShadow() ? null : policy.countIf();
			if (countIf != null) {
				if (call.countedPolicies.isEmpty()) {
					call.countedPolicies = new ArrayList<>(2);
				}
				if (policy.reservesCountIf()) {
					// taken with the enforced limits, given back after the response
					reserve(call, policy, countIf, key, limits);
				}
				else {
					call.counted = countedLimits(call.counted, call.countedPolicies, policy, countIf, key, limits);
				}
				continue;
			}
			if (policy.isShadow() && call.shadow.isEmpty()) {
				call.shadow = new ArrayList<>(2);
			}
			List<KeyedLimit> target = policy.isShadow() ? call.shadow : call.enforced;
			for (int i = 0; i < limits.size(); i++) {
				KeyedLimit keyed = policy.keyedLimit(key, limits, i);
				if (!target.contains(keyed)) {
					target.add(keyed);
				}
			}
		}
		return call;
	}

	private RateLimitResult finish(Call call, Decision decision, @Nullable Decision shadowDecision, long start,
			long cost, long shadowCost, RateLimitContext context) {
		// no limit applied to the call (its policies have none for the tier): the backend
		// was not asked, which a zero duration says; a decision that took less than the
		// clock's resolution counts one nanosecond
		Duration duration = (call.enforced.isEmpty() && call.shadow.isEmpty() && call.counted.isEmpty()) ? Duration.ZERO
				: Duration.ofNanos(Math.max(1, System.nanoTime() - start));
		ResponseCharge charge = null;
		if (decision.isAllowed() && !call.countedPolicies.isEmpty()) {
			// the conditions are evaluated once the response is final, outside Spring
			// Security's filter chain: they read the principal of the decision
			context.keepPrincipal();
			charge = new ResponseCharge(call.countedPolicies, cost, context);
		}
		RateLimitResult result = new RateLimitResult(decision, shadowDecision, call.tier, cost, shadowCost,
				call.usedNames, charge);
		if (!this.listeners.isEmpty()) {
			RateLimitEvent event = new RateLimitEvent(outcomes(call.used, result), call.tier, this.backend, duration,
					result);
			this.listeners.decided(event);
		}
		// last, once nothing can throw: permits renewed until the caller releases the
		// result it now has
		this.renewals.hold(decision);
		if (shadowDecision != null) {
			this.renewals.hold(shadowDecision);
		}
		return result;
	}

	/**
	 * Adds the limits of a {@code count-if} policy that reserves its cost to the call's
	 * enforced limits, once each, and records them for the response to settle.
	 */
	private static void reserve(Call call, Policy policy, RateLimitCondition countIf, String key, List<Limit> limits) {
		List<KeyedLimit> own = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit keyed = policy.keyedLimit(key, limits, i);
			if (!call.enforced.contains(keyed)) {
				call.enforced.add(keyed);
				own.add(keyed);
			}
		}
		if (!own.isEmpty()) {
			call.countedPolicies.add(new ResponseCharge.Counted(policy.name(), countIf, own, true));
		}
	}

	/**
	 * Adds the limits of a {@code count-if} policy for a call's key, once each.
	 * @return the list of every count-if limit of the call
	 */
	private static List<KeyedLimit> countedLimits(List<KeyedLimit> counted,
			List<ResponseCharge.Counted> countedPolicies, Policy policy, RateLimitCondition countIf, String key,
			List<Limit> limits) {
		List<KeyedLimit> all = counted.isEmpty() ? new ArrayList<>(2) : counted;
		List<KeyedLimit> own = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit keyed = policy.keyedLimit(key, limits, i);
			if (!all.contains(keyed)) {
				all.add(keyed);
				own.add(keyed);
			}
		}
		if (!own.isEmpty()) {
			countedPolicies.add(new ResponseCharge.Counted(policy.name(), countIf, own, false));
		}
		return all;
	}

	/**
	 * Checks the limits of {@code count-if} policies without charging them: a call of
	 * cost 0 reads what each has left (through the failure policy, like any call). The
	 * limits with fewer permits left than the cost are then asked for the cost, which
	 * they refuse, taking nothing: the limiter decides the rejection, so that it tells
	 * the wait and starts the policy's penalty, if any.
	 */
	private Decision check(List<KeyedLimit> counted, long cost) {
		Decision read = this.limiter.acquire(counted, 0);
		List<KeyedLimit> spent = spent(read, cost);
		return spent.isEmpty() ? read : checked(read, this.limiter.acquire(spent, cost));
	}

	/**
	 * Returns the {@code count-if} limits with fewer permits left than the cost, by the
	 * read of cost 0; none when the read rejected or the failure policy decided it.
	 */
	private static List<KeyedLimit> spent(Decision read, long cost) {
		if (!read.isAllowed() || read.source() == Decision.Source.FAILED_OPEN || read.statuses().isEmpty()) {
			return List.of();
		}
		List<KeyedLimit> spent = new ArrayList<>(1);
		for (LimitStatus status : read.statuses()) {
			if (status.remaining() < cost) {
				spent.add(status.target());
			}
		}
		return spent;
	}

	/**
	 * Returns the check of {@code count-if} limits: the read, with the refusals of the
	 * spent limits in their places.
	 */
	private static Decision checked(Decision read, Decision refused) {
		if (refused.isAllowed() || refused.statuses().isEmpty()) {
			// refilled in between (then charged already), or decided by the failure
			// policy
			return refused.isAllowed() ? read : refused;
		}
		List<LimitStatus> statuses = new ArrayList<>(read.statuses().size());
		for (LimitStatus status : read.statuses()) {
			LimitStatus decided = status;
			for (LimitStatus rejection : refused.statuses()) {
				if (rejection.target().equals(status.target())) {
					decided = rejection;
				}
			}
			statuses.add(decided);
		}
		return Decision.of(statuses, List.of(), refused.source());
	}

	/**
	 * Checks the limits of {@code count-if} policies as {@link #check} does, through the
	 * limiter's asynchronous calls.
	 */
	private CompletableFuture<Decision> checkAsync(List<KeyedLimit> counted, long cost) {
		return this.limiter.acquireAsync(counted, 0).thenCompose((read) -> {
			List<KeyedLimit> spent = spent(read, cost);
			if (spent.isEmpty()) {
				return CompletableFuture.completedFuture(read);
			}
			return this.limiter.acquireAsync(spent, cost).thenApply((refused) -> checked(read, refused));
		});
	}

	/**
	 * Returns the decision of the ordinary limits with the statuses of the
	 * {@code count-if} limits that allowed the call beside them, for the headers. A
	 * decision the failure policy made without the backend stays as it is.
	 */
	private static Decision withChecked(Decision acquired, Decision checked) {
		if (checked.statuses().isEmpty() || acquired.source() == Decision.Source.FAILED_OPEN
				|| acquired.source() == Decision.Source.FAILED_CLOSED) {
			return acquired;
		}
		int taken = acquired.statuses().size();
		List<LimitStatus> statuses = new ArrayList<>(taken + checked.statuses().size());
		statuses.addAll(acquired.statuses());
		statuses.addAll(checked.statuses());
		// the marks of what was taken, which a refund of a reserved policy needs; the
		// checked limits took nothing
		long[] marks = new long[statuses.size()];
		for (int i = 0; i < taken; i++) {
			marks[i] = acquired.mark(i);
		}
		return Decision.of(statuses, acquired.leases(), acquired.source(), marks);
	}

	/**
	 * Settles the {@code count-if} policies of an allowed call once its response is
	 * known. A policy that reserved the call's cost gets it back when its condition is
	 * false for the response; a policy that only checked it ({@code check-then-charge})
	 * is charged the cost when its condition is true. A condition that cannot be
	 * evaluated counts as true (and is logged at warn level), so that a broken condition
	 * never makes failures free. A charge takes what is left when concurrent calls spent
	 * the permits first; what it decides does not change the call's response. Settles
	 * once: calling it again, or for a result without such policies, does nothing.
	 * @param result the result of the call
	 * @param response the response, or {@code null} for a call outside a web request
	 */
	public void chargeAfterResponse(RateLimitResult result, @Nullable RateLimitResponse response) {
		chargeAfterResponse(result, settle(result.responseCharge(), response, false));
	}

	/**
	 * Settles the {@code count-if} policies of an allowed call whose response never came
	 * (its client went away before it): as if every condition held, so that a client that
	 * hangs up gets no free try. A reserved cost stays taken; a checked one is charged.
	 * @param result the result of the call
	 * @return done once settled; it never completes exceptionally (a failure is logged)
	 */
	public CompletableFuture<Void> chargeUnansweredAsync(RateLimitResult result) {
		return chargeAfterResponseAsync(result, settle(result.responseCharge(), null, true));
	}

	private void chargeAfterResponse(RateLimitResult result, Settlement settlement) {
		ResponseCharge charge = result.responseCharge();
		if (charge == null || settlement.isEmpty()) {
			return;
		}
		if (!settlement.refunded.isEmpty()) {
			try {
				this.limiter.refund(result.decision(), settlement.refunded, charge.cost());
			}
			catch (RuntimeException ex) {
				logger.warn("Could not give back the reserved cost of the count-if policies " + policyNames(charge)
						+ " after a response", ex);
			}
		}
		try {
			List<KeyedLimit> charged = settlement.charged;
			if (!charged.isEmpty()) {
				Decision decision = this.limiter.acquire(charged, charge.cost());
				if (!decision.isAllowed() && charged.size() > 1) {
					// concurrent calls spent some limit first: a rejected call takes
					// nothing, so each limit is charged on its own, as far as it has
					// permits left
					for (KeyedLimit limit : charged) {
						this.limiter.acquire(limit, charge.cost());
					}
				}
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not settle the count-if policies " + policyNames(charge) + " after a response", ex);
		}
	}

	/**
	 * Settles the {@code count-if} policies of an allowed call as
	 * {@link #chargeAfterResponse} does, through the limiter's asynchronous calls, so
	 * that a reactive application settles on an event loop.
	 * @param result the result of the call
	 * @param response the response, or {@code null} for a call outside a web request
	 * @return done once settled; it never completes exceptionally (a failure is logged)
	 */
	public CompletableFuture<Void> chargeAfterResponseAsync(RateLimitResult result,
			@Nullable RateLimitResponse response) {
		return chargeAfterResponseAsync(result, settle(result.responseCharge(), response, false));
	}

	private CompletableFuture<Void> chargeAfterResponseAsync(RateLimitResult result, Settlement settlement) {
		ResponseCharge charge = result.responseCharge();
		if (charge == null || settlement.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		CompletableFuture<Void> refunded;
		try {
			refunded = settlement.refunded.isEmpty() ? CompletableFuture.completedFuture(null)
					: this.limiter.refundAsync(result.decision(), settlement.refunded, charge.cost());
		}
		catch (RuntimeException ex) {
			refunded = CompletableFuture.failedFuture(ex);
		}
		List<KeyedLimit> charged = settlement.charged;
		CompletableFuture<?> done = charged.isEmpty() ? refunded : CompletableFuture.allOf(refunded,
				this.limiter.acquireAsync(charged, charge.cost()).thenCompose((decision) -> {
					if (decision.isAllowed() || charged.size() == 1) {
						return CompletableFuture.<Void>completedFuture(null);
					}
					CompletableFuture<?>[] each = new CompletableFuture<?>[charged.size()];
					for (int i = 0; i < each.length; i++) {
						each[i] = this.limiter.acquireAsync(List.of(charged.get(i)), charge.cost());
					}
					return CompletableFuture.allOf(each);
				}));
		return done.handle((ignored, ex) -> {
			if (ex != null) {
				logger.warn("Could not settle the count-if policies " + policyNames(charge) + " after a response", ex);
			}
			return null;
		});
	}

	/**
	 * What the response of a call settles: the reserved limits to give the cost back to,
	 * and the checked limits to charge it to.
	 */
	private record Settlement(List<KeyedLimit> refunded, List<KeyedLimit> charged) {

		static final Settlement NONE = new Settlement(List.of(), List.of());

		boolean isEmpty() {
			return this.refunded.isEmpty() && this.charged.isEmpty();
		}

	}

	/**
	 * Marks a charge settled and says what its response settles; nothing when there is no
	 * charge or it was settled before.
	 * @param unanswered whether the response never came: every condition then counts as
	 * true
	 */
	private static Settlement settle(@Nullable ResponseCharge charge, @Nullable RateLimitResponse response,
			boolean unanswered) {
		if (charge == null || !charge.settle()) {
			return Settlement.NONE;
		}
		RateLimitContext context = charge.context();
		context.responded(response);
		List<KeyedLimit> refunded = new ArrayList<>(2);
		List<KeyedLimit> charged = new ArrayList<>(2);
		for (ResponseCharge.Counted counted : charge.policies()) {
			boolean counts = unanswered || counts(counted, context);
			if (counted.reserved() && !counts) {
				refunded.addAll(counted.limits());
			}
			else if (!counted.reserved() && counts) {
				charged.addAll(counted.limits());
			}
		}
		return new Settlement(refunded, charged);
	}

	private static boolean counts(ResponseCharge.Counted counted, RateLimitContext context) {
		try {
			return counted.condition().test(context);
		}
		catch (RuntimeException ex) {
			logger.warn("Charged rate-limit policy '" + counted.policy() + "': its count-if " + counted.condition()
					+ " failed for a response", ex);
			return true;
		}
	}

	private static String policyNames(ResponseCharge charge) {
		return charge.policies().stream().map(ResponseCharge.Counted::policy).toList().toString();
	}

	/**
	 * Returns the key of a policy for a call.
	 * @param policy the policy
	 * @param keyOverride the key that the call applies the policy with, if not its own
	 * @param context the call
	 * @return the key, or {@code null} for a shadow policy whose key cannot be evaluated
	 * for the call or fails
	 * @throws RateLimitEvaluationException if the key of an enforced policy cannot be
	 * evaluated for the call (and whatever else its key resolver throws)
	 */
	private static @Nullable String keyOf(Policy policy, @Nullable KeyResolver keyOverride, RateLimitContext context) {
		String key;
		try {
			key = ((keyOverride != null) ? keyOverride : policy.keyResolver()).resolveKey(context);
		}
		catch (RuntimeException ex) {
			throwUnlessShadow(ex, policy.isShadow(), (failure) -> failure.ofKey("policy " + policy.name()),
					"shadow policy '" + policy.name() + "'");
			return null;
		}
		if (key == null || key.isBlank()) {
			throw new IllegalStateException("The key of rate-limit policy '" + policy.name() + "' is empty");
		}
		return key;
	}

	/**
	 * Handles a key or cost that failed for a call. Unless it serves shadow policies
	 * only, it is thrown: a {@link RateLimitEvaluationException} named after what it
	 * belongs to by {@code attribution}, anything else as it is. Shadow policies never
	 * refuse a call: the failure is then logged, and the caller leaves them undecided for
	 * the call; at debug level when the call could not be evaluated (any client can cause
	 * that), at warn level when the application's code failed, which a trial of the
	 * policy should bring to light without refusing anything.
	 * @param failure what the key or cost threw
	 * @param shadow whether the key or cost serves shadow policies only
	 * @param attribution names an evaluation failure after its owner, such as
	 * {@code (e) -> e.ofCost("policy api")}
	 * @param shadowPolicies the shadow policies, for the log
	 */
	public static void throwUnlessShadow(RuntimeException failure, boolean shadow,
			UnaryOperator<RateLimitEvaluationException> attribution, String shadowPolicies) {
		RuntimeException attributed = (failure instanceof RateLimitEvaluationException evaluation)
				? attribution.apply(evaluation) : failure;
		if (!shadow) {
			throw attributed;
		}
		skippedShadow(shadowPolicies, attributed);
	}

	private static void skippedShadow(String what, RuntimeException failure) {
		if (failure instanceof RateLimitEvaluationException) {
			if (logger.isDebugEnabled()) {
				logger.debug("Did not decide " + what + " for a call: " + failure.getMessage(), failure);
			}
		}
		else {
			logger.warn("Did not decide " + what + " for a call: its key or cost failed", failure);
		}
	}

	private static Map<String, RateLimitOutcome> outcomes(List<Policy> used, RateLimitResult result) {
		Map<String, RateLimitOutcome> outcomes = new LinkedHashMap<>();
		Decision decision = result.decision();
		RateLimitOutcome failure = failureOutcome(decision);
		boolean delayed = decision.isAllowed() && !decision.delay().isZero();
		Decision shadowDecision = result.shadowDecision();
		// decided by the failure mode (allow or deny), a shadow policy counts
		// failed-open, since it lets every call
		// through, not what it would have done: an outage looks neither like a trial
		// rejecting every call nor like one
		// rejecting anything; local fallback limits decide as the backend would, and
		// count as such
		boolean shadowFailed = shadowDecision != null && failureOutcome(shadowDecision) != null;
		for (Policy policy : used) {
			if (!policy.isShadow()) {
				outcomes.put(policy.name(),
						(failure != null) ? failure : enforcedOutcome(policy.name(), decision, delayed));
			}
			else if (shadowDecision != null) {
				outcomes.put(policy.name(),
						shadowFailed ? RateLimitOutcome.FAILED_OPEN : shadowOutcome(policy.name(), shadowDecision));
			}
		}
		return Collections.unmodifiableMap(outcomes);
	}

	/**
	 * Returns an enforced policy's own verdict on a call that the backend decided (one
	 * that the failure mode decided counts as such for every policy). Of a rejected call,
	 * only the policies whose limits rejected it count as rejected, and of a delayed one
	 * only those whose limits delayed it, so that the outcomes of a policy show what that
	 * policy does; the others allowed the call.
	 */
	private static RateLimitOutcome enforcedOutcome(String policy, Decision decision, boolean delayed) {
		if (!decision.isAllowed()) {
			if (!rejectedBy(policy, decision)) {
				return RateLimitOutcome.ALLOWED;
			}
			return penalizedBy(policy, decision) ? RateLimitOutcome.PENALIZED : RateLimitOutcome.REJECTED;
		}
		return (delayed && delayedBy(policy, decision)) ? RateLimitOutcome.DELAYED : RateLimitOutcome.ALLOWED;
	}

	/**
	 * Returns a shadow policy's verdict on a call that the backend, or local fallback
	 * limits, decided.
	 */
	private static RateLimitOutcome shadowOutcome(String policy, Decision shadowDecision) {
		return rejectedBy(policy, shadowDecision) ? RateLimitOutcome.SHADOW_REJECTED : RateLimitOutcome.ALLOWED;
	}

	private static @Nullable RateLimitOutcome failureOutcome(Decision decision) {
		return switch (decision.source()) {
			case FAILED_OPEN -> RateLimitOutcome.FAILED_OPEN;
			case FAILED_CLOSED -> RateLimitOutcome.FAILED_CLOSED;
			default -> null;
		};
	}

	private static boolean delayedBy(String policy, Decision decision) {
		for (LimitStatus status : decision.statuses()) {
			if (status.delayMicros() > 0 && status.target().policy().equals(policy)) {
				return true;
			}
		}
		return false;
	}

	private static boolean penalizedBy(String policy, Decision decision) {
		for (LimitStatus status : decision.rejectedBy()) {
			if (status.penalized() && status.target().policy().equals(policy)) {
				return true;
			}
		}
		return false;
	}

	private static boolean rejectedBy(String policy, Decision decision) {
		for (LimitStatus status : decision.rejectedBy()) {
			if (status.target().policy().equals(policy)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Gives back the concurrency permits a result holds. Calling it twice does nothing.
	 * @param result the result
	 */
	public void release(RateLimitResult result) {
		if (!result.decision().leases().isEmpty()) {
			this.renewals.release(result.decision());
			this.limiter.release(result.decision());
		}
		Decision shadowDecision = result.shadowDecision();
		if (shadowDecision != null && !shadowDecision.leases().isEmpty()) {
			this.renewals.release(shadowDecision);
			this.limiter.release(shadowDecision);
		}
	}

	/**
	 * Gives back the concurrency permits a result holds as {@link #release} does, without
	 * blocking the calling thread on the limiter's I/O. Calling it twice does nothing.
	 * @param result the result
	 * @return done once the limiter has given them back; it never completes exceptionally
	 * (the limiter reports its own failures)
	 */
	public CompletableFuture<Void> releaseAsync(RateLimitResult result) {
		CompletableFuture<Void> enforced = releaseAsync(result.decision());
		Decision shadowDecision = result.shadowDecision();
		return (shadowDecision != null) ? CompletableFuture.allOf(enforced, releaseAsync(shadowDecision)) : enforced;
	}

	private CompletableFuture<Void> releaseAsync(Decision decision) {
		if (decision.leases().isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		this.renewals.release(decision);
		return this.limiter.releaseAsync(decision).exceptionally((ex) -> {
			logger.debug("Could not give back the concurrency permits of a call", ex);
			return null;
		});
	}

	/**
	 * Returns the number of decisions whose concurrency permits are held (renewed until
	 * released).
	 * @return the decisions held
	 */
	public int heldDecisions() {
		return this.renewals.size();
	}

	/**
	 * Stops renewing the permits of calls still in flight.
	 */
	@Override
	public void close() {
		this.renewals.close();
	}

	/**
	 * Returns the tier of a call: the {@link TierResolver}'s answer, else the default
	 * tier.
	 * @param context the call
	 * @return the lower-case tier
	 */
	public String resolveTier(RateLimitContext context) {
		return resolveTier(context, this.policies);
	}

	private String resolveTier(RateLimitContext context, PolicyRegistry registry) {
		@Nullable String tier = this.tierResolver.resolveTier(context);
		return (tier == null || tier.isBlank()) ? registry.defaultTier() : PolicyRegistry.normalizeTier(tier);
	}

	/**
	 * Returns the policy of that name in the running configuration: a filter rule or an
	 * annotation resolved its policy when it was read, and a reload may have changed the
	 * policy since.
	 */
	private static Policy current(PolicyRegistry registry, Policy policy) {
		Policy current = registry.find(policy.name());
		return (current != null) ? current : policy;
	}

	private List<Limit> overridden(LimitOverrides overrides, Policy policy, String key, List<Limit> limits) {
		LimitOverride override = overrides.find(policy.name(), key);
		if (override == null || override.isExpiredAt(this.timeSource.now())) {
			return limits;
		}
		return override.limits();
	}

	/**
	 * Returns the running policies.
	 * @return the policy registry
	 */
	public PolicyRegistry policies() {
		return this.policies;
	}

	/**
	 * Makes a checked configuration the running one, from the next call on. Each call is
	 * decided wholly by the configuration it started with. A client's spent permits carry
	 * over to the limits of the same algorithm and name, and its spent share to a limit
	 * of another algorithm at the same position, of the new configuration or of the one
	 * it replaces ({@link PolicyRegistry#following}).
	 * @param policies the new policies
	 */
	public void applyPolicies(PolicyRegistry policies) {
		this.policies = Objects.requireNonNull(policies, "policies must not be null").following(this.policies);
		this.configurationApplied = Instant.now();
	}

	/**
	 * Returns when the running configuration was applied: at start-up, or at the last
	 * reload that changed it.
	 * @return the instant
	 */
	public Instant configurationApplied() {
		return this.configurationApplied;
	}

	/**
	 * Returns the per-client overrides, if any.
	 * @return the overrides, or {@code null}
	 */
	public @Nullable LimitOverrides overrides() {
		return this.overrides;
	}

	/**
	 * Returns the limits a client gets in a policy: its override's while one holds, else
	 * its tier's.
	 * @param policy the policy
	 * @param key the client's stored key
	 * @param tier the lower-case tier
	 * @return the limits
	 */
	public List<Limit> limitsFor(Policy policy, String key, String tier) {
		List<Limit> limits = policy.limitsFor(tier, this.policies.defaultTier());
		LimitOverrides overrides = this.overrides;
		return (overrides != null && overrides.mayOverride(policy.name())) ? overridden(overrides, policy, key, limits)
				: limits;
	}

	/**
	 * Returns the limiter that decides.
	 * @return the limiter
	 */
	public RateLimiter limiter() {
		return this.limiter;
	}

	/**
	 * Returns the name of the backend.
	 * @return the backend name
	 */
	public String backend() {
		return this.backend;
	}

}
