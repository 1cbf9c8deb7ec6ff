package dev.ratelimit.spring.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.actuate.KeyStateDescriptor.LimitStateDescriptor;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code ratelimits} actuator endpoint: the configured policies and filters, one client's state in a policy
 * (read without consuming anything), and forgetting that state.
 *
 * <p>
 * A client is named as the policy's key strategy reads it from a call: the raw API key for {@code api-key} (hashed
 * here exactly as for a decision), the principal's name for {@code principal}, the address for {@code ip}, the header
 * or expression value otherwise; {@code ip:ADDRESS} names a caller that fell back to its address. The delete operation
 * lifts a client's limits, so expose it over HTTP only behind authorization.
 */
@Endpoint(id = "ratelimits")
public class RateLimitsEndpoint {

	/**
	 * What the delete operation declares it produces over HTTP, on the endpoint and on its web extension alike: the web
	 * extension's operation, which answers 503 with a body when the backend fails, replaces the endpoint's only when the
	 * two match, and an operation returning nothing would otherwise declare nothing.
	 */
	static final String ACTUATOR_V3_JSON = "application/vnd.spring-boot.actuator.v3+json";

	/** See {@link #ACTUATOR_V3_JSON}. */
	static final String JSON = "application/json";

	private final RateLimitService service;

	private final FailureMode failureMode;

	private final Supplier<List<FilterDescriptor>> filters;

	/**
	 * Creates the endpoint.
	 * @param service the decision path, whose policies and limiter the endpoint reads
	 * @param failureMode what the backend does with calls while it fails
	 * @param filters the filter rules as they apply now
	 */
	public RateLimitsEndpoint(RateLimitService service, FailureMode failureMode,
			Supplier<List<FilterDescriptor>> filters) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.failureMode = Objects.requireNonNull(failureMode, "failureMode must not be null");
		this.filters = Objects.requireNonNull(filters, "filters must not be null");
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
				policies, this.filters.get());
	}

	/**
	 * Returns a client's state in a policy without consuming anything.
	 * @param policy the policy name
	 * @param key the client, as the policy's key strategy identifies it
	 * @param tier the tier whose limits to show; the default tier if {@code null}
	 * @return the state, or {@code null} (404) if there is no such policy
	 */
	@ReadOperation
	public @Nullable KeyStateDescriptor key(@Selector String policy, @Selector String key, @Nullable String tier) {
		Policy found = this.service.policies().find(policy);
		if (found == null) {
			return null;
		}
		String effectiveTier = (tier == null || tier.isBlank()) ? this.service.policies().defaultTier()
				: PolicyRegistry.normalizeTier(tier);
		String storedKey = storedKey(found, key);
		List<KeyedLimit> targets = found.limitsFor(effectiveTier)
			.stream()
			.map((limit) -> new KeyedLimit(found.name(), storedKey, limit))
			.toList();
		List<LimitStatus> statuses = targets.isEmpty() ? List.of() : this.service.limiter().inspect(targets);
		List<LimitStateDescriptor> limits = new ArrayList<>(statuses.size());
		for (LimitStatus status : statuses) {
			limits.add(new LimitStateDescriptor(status.target().limit().algorithm().configName(), status.limit(),
					status.remaining(), secondsRoundedUp(status.resetAfterMicros())));
		}
		return new KeyStateDescriptor(found.name(), effectiveTier, limits);
	}

	/**
	 * Forgets a client's state in every limit of a policy, whatever its tier, so that its next call sees full limits.
	 * @param policy the policy name
	 * @param key the client, as the policy's key strategy identifies it
	 */
	@DeleteOperation(produces = { ACTUATOR_V3_JSON, JSON })
	public void reset(@Selector String policy, @Selector String key) {
		Policy found = this.service.policies().find(policy);
		if (found == null) {
			throw new InvalidEndpointRequestException("No rate-limit policy named '" + policy + "'; known: "
					+ this.service.policies().names(), "No such rate-limit policy");
		}
		String storedKey = storedKey(found, key);
		Set<Limit> limits = new LinkedHashSet<>(found.limits());
		found.tiers().values().forEach(limits::addAll);
		for (Limit limit : limits) {
			this.service.limiter().reset(new KeyedLimit(found.name(), storedKey, limit));
		}
	}

	private static String storedKey(Policy policy, String key) {
		try {
			return policy.keyResolver().storedKey(key);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid client key");
		}
	}

	private static long secondsRoundedUp(long micros) {
		return (micros <= 0) ? 0 : (micros + 999_999) / 1_000_000;
	}

}
