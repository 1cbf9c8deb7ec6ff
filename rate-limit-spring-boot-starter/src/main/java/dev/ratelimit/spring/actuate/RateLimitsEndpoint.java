package dev.ratelimit.spring.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.overrides.LimitOverride;
import dev.ratelimit.spring.overrides.LimitOverrides;
import dev.ratelimit.spring.actuate.KeyStateDescriptor.LimitStateDescriptor;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;

/**
 * The {@code ratelimits} actuator endpoint: the configured policies and filters, one
 * client's state in a policy (read without consuming anything), and forgetting that
 * state. The delete operation lifts a client's limits, so expose it over HTTP only behind
 * authorization.
 */
@Endpoint(id = "ratelimits")
public class RateLimitsEndpoint {

	/**
	 * What the delete operation declares it produces over HTTP, on the endpoint and on
	 * its web extension alike: the web extension's operation, which answers 503 with a
	 * body when the backend fails, replaces the endpoint's only when the two match, and
	 * an operation returning nothing would otherwise declare nothing.
	 */
	static final String ACTUATOR_V3_JSON = "application/vnd.spring-boot.actuator.v3+json";

	/** See {@link #ACTUATOR_V3_JSON}. */
	static final String JSON = "application/json";

	private final RateLimitService service;

	private final FailureMode failureMode;

	private final Supplier<List<FilterDescriptor>> filters;

	private final @Nullable Function<String, KeyResolver> strategies;

	/**
	 * Creates the endpoint, which names every client as its policy's own key strategy
	 * reads it.
	 * @param service the decision path, whose policies and limiter the endpoint reads
	 * @param failureMode what the backend does with calls while it fails
	 * @param filters the filter rules as they apply now
	 */
	public RateLimitsEndpoint(RateLimitService service, FailureMode failureMode,
			Supplier<List<FilterDescriptor>> filters) {
		this(service, failureMode, filters, null);
	}

	/**
	 * Creates the endpoint.
	 * @param service the decision path, whose policies and limiter the endpoint reads
	 * @param failureMode what the backend does with calls while it fails
	 * @param filters the filter rules as they apply now
	 * @param strategies the resolver of a key strategy given by its configuration text
	 * (such as {@code KeyResolverFactory::create}), for clients keyed by another strategy
	 * than their policy's; {@code null} to refuse a {@code strategy}
	 */
	public RateLimitsEndpoint(RateLimitService service, FailureMode failureMode,
			Supplier<List<FilterDescriptor>> filters, @Nullable Function<String, KeyResolver> strategies) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.failureMode = Objects.requireNonNull(failureMode, "failureMode must not be null");
		this.filters = Objects.requireNonNull(filters, "filters must not be null");
		this.strategies = strategies;
	}

	/**
	 * Describes the backend, its failure mode, the policies and the filters.
	 * @return the overview
	 */
	@ReadOperation
	public RateLimitsDescriptor rateLimits() {
		PolicyRegistry registry = this.service.policies();
		Map<String, PolicyDescriptor> policies = new LinkedHashMap<>();
		registry.policies().forEach((policy) -> policies.put(policy.name(), PolicyDescriptor.of(policy)));
		return new RateLimitsDescriptor(this.service.backend(), this.failureMode.toString(), registry.defaultTier(),
				policies, this.filters.get(), this.service.configurationApplied());
	}

	/**
	 * Returns a client's state in a policy without consuming anything, the client named
	 * as the policy's key strategy reads it.
	 * @param policy the policy name
	 * @param key the client
	 * @param tier the tier whose limits to show; the default tier if {@code null}
	 * @return the state, or {@code null} if there is no such policy
	 */
	public @Nullable KeyStateDescriptor key(String policy, String key, @Nullable String tier) {
		return key(policy, new String[] { key }, tier, null);
	}

	/**
	 * Returns a client's state in a policy without consuming anything.
	 * <p>
	 * A client is named as the key strategy reads it from a call: the raw API key for
	 * {@code api-key} (hashed here exactly as for a decision), the principal's name for
	 * {@code principal}, the address for {@code ip}, the header or expression value
	 * otherwise; {@code ip:ADDRESS} names a caller that fell back to its address. The
	 * client may contain {@code /} (an IPv6 network, a base64 API key): the rest of the
	 * path names it. A client keyed by another strategy than its policy's (by a
	 * {@code @RateLimited} method's {@code key}) needs that strategy in {@code strategy}.
	 * @param policy the policy name
	 * @param key the client, as the key strategy identifies it; its segments are joined
	 * with {@code /}
	 * @param tier the tier whose limits to show, those a caller of that tier gets (for a
	 * tier the policy does not list, its {@code limits}, else the default tier's); the
	 * default tier if {@code null}
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 * @return the state, or {@code null} (404) if there is no such policy
	 */
	public @Nullable KeyStateDescriptor key(String policy, String[] key, @Nullable String tier,
			@Nullable String strategy) {
		Policy found = this.service.policies().find(policy);
		if (found == null) {
			return null;
		}
		String effectiveTier = (tier == null || tier.isBlank()) ? this.service.policies().defaultTier()
				: PolicyRegistry.normalizeTier(tier);
		String storedKey = storedKey(found, key, strategy);
		List<Limit> applied = this.service.limitsFor(found, storedKey, effectiveTier);
		List<KeyedLimit> targets = new ArrayList<>(applied.size());
		for (int i = 0; i < applied.size(); i++) {
			targets.add(found.keyedLimit(storedKey, applied, i));
		}
		List<LimitStatus> statuses = targets.isEmpty() ? List.of() : this.service.limiter().inspect(targets);
		List<LimitStateDescriptor> limits = new ArrayList<>(statuses.size());
		for (LimitStatus status : statuses) {
			limits.add(new LimitStateDescriptor(status.target().limit().algorithm().configName(), status.limit(),
					status.remaining(), secondsRoundedUp(status.resetAfterMicros()), status.penalized()));
		}
		return new KeyStateDescriptor(found.name(), effectiveTier, limits);
	}

	/**
	 * Forgets a client's state in every limit of a policy, whatever its tier, the client
	 * named as the policy's key strategy reads it.
	 * @param policy the policy name
	 * @param key the client
	 */
	public void reset(String policy, String key) {
		reset(policy, new String[] { key }, null);
	}

	/**
	 * Forgets a client's state in every limit of a policy, whatever its tier, so that its
	 * next call sees full limits. The client is named as for
	 * {@link #key(String, String[], String, String)}.
	 * @param policy the policy name
	 * @param key the client, as the key strategy identifies it; its segments are joined
	 * with {@code /}
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 */
	public void reset(String policy, String[] key, @Nullable String strategy) {
		Policy found = this.service.policies().find(policy);
		if (found == null) {
			throw new InvalidEndpointRequestException(
					"No rate-limit policy named '" + policy + "'; known: " + this.service.policies().names(),
					"No such rate-limit policy");
		}
		String storedKey = storedKey(found, key, strategy);
		List<List<Limit>> lists = new ArrayList<>();
		lists.add(found.limits());
		lists.addAll(found.tiers().values());
		LimitOverrides overrides = this.service.overrides();
		LimitOverride override = (overrides != null) ? overrides.find(found.name(), storedKey) : null;
		if (override != null) {
			lists.add(override.limits());
		}
		// state belongs to a limit's name and algorithm: one reset for each
		List<KeyedLimit> reset = new ArrayList<>();
		for (List<Limit> limits : lists) {
			for (int i = 0; i < limits.size(); i++) {
				KeyedLimit target = Policy.keyedLimit(found.name(), storedKey, limits, i);
				if (reset.stream().noneMatch(target::sharesStateWith)) {
					reset.add(target);
					this.service.limiter().reset(target);
				}
			}
		}
	}

	/**
	 * Returns a client's state in a policy without consuming anything: the read of
	 * {@code GET /actuator/ratelimits/{policy}/{key}}, as
	 * {@link #key(String, String[], String, String)} answers it.
	 * @param policyAndKey the policy, then the client's segments
	 * @param tier the tier whose limits to show; the default tier if {@code null}
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 * @return the state, or {@code null} (404) if there is no such policy
	 */
	@ReadOperation
	public @Nullable KeyStateDescriptor key(@Selector(match = Match.ALL_REMAINING) String[] policyAndKey,
			@Nullable String tier, @Nullable String strategy) {
		return key(PolicyAndClient.policy(policyAndKey), PolicyAndClient.client(policyAndKey), tier, strategy);
	}

	/**
	 * Forgets a client's state in every limit of a policy: the reset of {@code DELETE
	 * /actuator/ratelimits/{policy}/{key}}, as {@link #reset(String, String[], String)}
	 * does it.
	 * @param policyAndKey the policy, then the client's segments
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 */
	@DeleteOperation(produces = { ACTUATOR_V3_JSON, JSON })
	public void reset(@Selector(match = Match.ALL_REMAINING) String[] policyAndKey, @Nullable String strategy) {
		reset(PolicyAndClient.policy(policyAndKey), PolicyAndClient.client(policyAndKey), strategy);
	}

	private String storedKey(Policy policy, String[] segments, @Nullable String strategy) {
		String key = String.join("/", segments);
		if (key.isBlank()) {
			throw new InvalidEndpointRequestException("No client named", "Invalid client key");
		}
		KeyResolver resolver = (strategy == null || strategy.isBlank()) ? policy.keyResolver() : resolver(strategy);
		try {
			return resolver.storedKey(key);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid client key");
		}
	}

	private KeyResolver resolver(String strategy) {
		if (this.strategies == null) {
			throw new InvalidEndpointRequestException("This endpoint names clients by their policy's key strategy only",
					"Invalid key strategy");
		}
		try {
			return this.strategies.apply(strategy);
		}
		catch (RuntimeException ex) {
			throw new InvalidEndpointRequestException("Invalid key strategy '" + strategy + "': " + ex.getMessage(),
					"Invalid key strategy");
		}
	}

	private static long secondsRoundedUp(long micros) {
		return (micros <= 0) ? 0 : (micros + 999_999) / 1_000_000;
	}

}
