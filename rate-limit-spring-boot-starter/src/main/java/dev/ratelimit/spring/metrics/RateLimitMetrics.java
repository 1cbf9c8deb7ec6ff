package dev.ratelimit.spring.metrics;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitEvent;
import dev.ratelimit.spring.RateLimitListener;
import dev.ratelimit.spring.RateLimitOutcome;

/**
 * Records every decision of the {@code RateLimitService} in Micrometer:
 * {@value #REQUESTS}, {@value #DECISION}, {@value #BACKEND_FAILURES} and
 * {@value #LISTENER_FAILURES}. No metric is ever tagged with a client key.
 */
public class RateLimitMetrics implements RateLimitListener {

	/**
	 * The name of the decision counter, tagged {@code policy}, {@code tier} and
	 * {@code outcome}.
	 */
	public static final String REQUESTS = "ratelimit.requests";

	/**
	 * The name of the decision timer, tagged {@code backend}. It publishes a percentile
	 * histogram unless
	 * {@code management.metrics.distribution.percentiles-histogram.ratelimit.decision}
	 * says otherwise.
	 */
	public static final String DECISION = "ratelimit.decision";

	/**
	 * The name of the backend failure counter, tagged {@code backend} and
	 * {@code exception}.
	 */
	public static final String BACKEND_FAILURES = "ratelimit.backend.failures";

	/**
	 * The name of the counter of listeners that threw, tagged {@code listener}: the class
	 * of the {@code RateLimitListener}.
	 */
	public static final String LISTENER_FAILURES = "ratelimit.listener.failures";

	/**
	 * The counter of configuration reloads, tagged {@code result} = {@code applied} or
	 * {@code rejected}.
	 */
	public static final String RELOADS = "ratelimit.config.reloads";

	/**
	 * The {@code tier} tag of a caller whose tier no policy knows: neither one that some
	 * policy lists nor the default tier. Whatever resolves tiers could name any tier, so
	 * this keeps the number of series bounded.
	 */
	public static final String OTHER_TIER = "other";

	/**
	 * The {@code exception} tag of the failure counter registered, at zero, before any
	 * failure.
	 */
	public static final String NO_EXCEPTION = "none";

	private static final RateLimitOutcome[] OUTCOMES = RateLimitOutcome.values();

	private static final Duration MINIMUM_EXPECTED_DECISION = Duration.ofNanos(10_000);

	private static final Duration MAXIMUM_EXPECTED_DECISION = Duration.ofSeconds(1);

	// Meters are created once and kept, never looked up in the registry per decision: at
	// start-up for every
	// configured policy and tier, and on first use for any other combination.
	private final MeterRegistry registry;

	private final Map<String, PolicyMeters> policies;

	private final Set<String> knownTiers;

	private final ConcurrentMap<String, PolicyMeters> otherPolicies = new ConcurrentHashMap<>();

	private final ConcurrentMap<String, Timer> timers = new ConcurrentHashMap<>();

	private final ConcurrentMap<FailureKey, Counter> failures = new ConcurrentHashMap<>();

	private final ConcurrentMap<Class<?>, Counter> listenerFailures = new ConcurrentHashMap<>();

	/**
	 * Creates the recorder and registers the meters of every configured policy and tier,
	 * at zero: the outcomes {@code allowed} and {@code rejected}, or
	 * {@code shadow-rejected} for a shadow policy. So dashboards see zero rather than no
	 * data.
	 * @param registry the registry to record in
	 * @param policies the configured policies
	 * @param backend the name of the backend, such as {@code memory} or {@code redis}
	 */
	public RateLimitMetrics(MeterRegistry registry, PolicyRegistry policies, String backend) {
		this.registry = Objects.requireNonNull(registry, "registry must not be null");
		Map<String, PolicyMeters> meters = new HashMap<>();
		this.knownTiers = Set.copyOf(policies.knownTiers());
		for (Policy policy : policies.policies()) {
			PolicyMeters policyMeters = new PolicyMeters();
			for (String tier : this.knownTiers) {
				AtomicReferenceArray<Counter> counters = policyMeters.tier(tier);
				if (policy.isShadow()) {
					counter(counters, policy.name(), tier, RateLimitOutcome.ALLOWED);
					counter(counters, policy.name(), tier, RateLimitOutcome.SHADOW_REJECTED);
				}
				else {
					counter(counters, policy.name(), tier, RateLimitOutcome.ALLOWED);
					counter(counters, policy.name(), tier, RateLimitOutcome.REJECTED);
					if (policy.penaltyMicros() > 0) {
						counter(counters, policy.name(), tier, RateLimitOutcome.PENALIZED);
					}
				}
			}
			meters.put(policy.name(), policyMeters);
		}
		this.policies = meters;
		timer(backend);
		failureCounter(new FailureKey(backend, NO_EXCEPTION));
		reloadCounter(true);
		reloadCounter(false);
	}

	@Override
	public void onDecision(RateLimitEvent event) {
		if (!event.duration().isZero()) {
			timer(event.backend()).record(event.duration());
		}
		String tier = this.knownTiers.contains(event.tier()) ? event.tier() : OTHER_TIER;
		event.outcomes().forEach((policy, outcome) -> {
			AtomicReferenceArray<Counter> counters = policyMeters(policy).tier(tier);
			counter(counters, policy, tier, outcome).increment();
		});
	}

	@Override
	public void onBackendFailure(String backend, Throwable failure) {
		failureCounter(new FailureKey(backend, exceptionName(failure))).increment();
	}

	@Override
	public void onConfigurationReload(boolean applied) {
		reloadCounter(applied).increment();
	}

	private Counter reloadCounter(boolean applied) {
		return Counter.builder(RELOADS)
			.description("Reloads of the rate-limit configuration, applied or refused whole")
			.tag("result", applied ? "applied" : "rejected")
			.register(this.registry);
	}

	@Override
	public void onListenerFailure(Class<?> listener, Throwable failure) {
		this.listenerFailures
			.computeIfAbsent(listener,
					(type) -> Counter.builder(LISTENER_FAILURES)
						.description("Failures of rate-limit listeners, each skipped for the call it failed on")
						.tag("listener", type.getName())
						.register(this.registry))
			.increment();
	}

	private PolicyMeters policyMeters(String policy) {
		PolicyMeters meters = this.policies.get(policy);
		return (meters != null) ? meters : this.otherPolicies.computeIfAbsent(policy, (name) -> new PolicyMeters());
	}

	private Counter counter(AtomicReferenceArray<Counter> counters, String policy, String tier,
			RateLimitOutcome outcome) {
		Counter counter = counters.get(outcome.ordinal());
		if (counter == null) {
			// the registry answers the same counter for the same name and tags, so a race
			// registers one meter
			counter = Counter.builder(REQUESTS)
				.description("Rate-limit decisions, by policy, tier and outcome")
				.tag("policy", policy)
				.tag("tier", tier)
				.tag("outcome", outcome.tagValue())
				.register(this.registry);
			counters.set(outcome.ordinal(), counter);
		}
		return counter;
	}

	private Timer timer(String backend) {
		Timer timer = this.timers.get(backend);
		if (timer == null) {
			timer = this.timers.computeIfAbsent(backend,
					(name) -> Timer.builder(DECISION)
						.description("Time the rate-limit backend takes to decide a call")
						.tag("backend", name)
						.publishPercentileHistogram()
						.minimumExpectedValue(MINIMUM_EXPECTED_DECISION)
						.maximumExpectedValue(MAXIMUM_EXPECTED_DECISION)
						.register(this.registry));
		}
		return timer;
	}

	private Counter failureCounter(FailureKey key) {
		Counter counter = this.failures.get(key);
		if (counter == null) {
			counter = this.failures.computeIfAbsent(key,
					(failure) -> Counter.builder(BACKEND_FAILURES)
						.description("Failures of the rate-limit backend, each then decided by the failure mode")
						.tag("backend", failure.backend())
						.tag("exception", failure.exception())
						.register(this.registry));
		}
		return counter;
	}

	private static String exceptionName(Throwable failure) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		String name = cause.getClass().getSimpleName();
		return name.isEmpty() ? cause.getClass().getName() : name;
	}

	/**
	 * The decision counters of one policy: per tier, one slot per outcome, filled on
	 * first use.
	 */
	private static final class PolicyMeters {

		private final ConcurrentMap<String, AtomicReferenceArray<Counter>> tiers = new ConcurrentHashMap<>();

		AtomicReferenceArray<Counter> tier(String tier) {
			AtomicReferenceArray<Counter> counters = this.tiers.get(tier);
			return (counters != null) ? counters
					: this.tiers.computeIfAbsent(tier, (name) -> new AtomicReferenceArray<>(OUTCOMES.length));
		}

	}

	private record FailureKey(String backend, String exception) {

	}

}
