package dev.ratelimit.spring.actuate;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import dev.ratelimit.core.Limit;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.overrides.LimitOverride;
import dev.ratelimit.spring.overrides.LimitOverrides;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

/**
 * The {@code ratelimitoverrides} actuator endpoint: lists, reads, sets and removes the
 * limits of one client in one policy, which replace its tier's limits from its next call.
 * Over HTTP, {@link RateLimitOverridesWriteMapping} (servlet) or
 * {@link ReactiveRateLimitOverridesWriteMapping} (WebFlux) serves the {@code POST}, whose
 * body holds a list. A client is named as the {@code ratelimits} endpoint names it (the
 * raw API key for an {@code api-key} policy, hashed here as for a decision); the list
 * shows clients as stored. Setting an override raises a client's limits, so expose the
 * write operations over HTTP only behind authorization.
 */
@WebEndpoint(id = "ratelimitoverrides")
public class RateLimitOverridesEndpoint {

	private final RateLimitService service;

	private final LimitOverrides overrides;

	private final BiFunction<List<?>, @Nullable Duration, List<Limit>> limitParser;

	private final Supplier<Instant> clock;

	/**
	 * Creates the endpoint.
	 * @param service the decision path, whose running policies name the valid policies
	 * @param overrides where overrides live
	 * @param limitParser reads limits given as in YAML (a list of maps) with the policy's
	 * penalty, if any, which every limit of a policy carries; throws
	 * {@link RateLimitConfigurationException} naming what is wrong
	 * @param clock the time that an expiry must lie after
	 */
	public RateLimitOverridesEndpoint(RateLimitService service, LimitOverrides overrides,
			BiFunction<List<?>, @Nullable Duration, List<Limit>> limitParser, Supplier<Instant> clock) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.overrides = Objects.requireNonNull(overrides, "overrides must not be null");
		this.limitParser = Objects.requireNonNull(limitParser, "limitParser must not be null");
		this.clock = Objects.requireNonNull(clock, "clock must not be null");
	}

	/**
	 * Lists every override that has not expired.
	 * @return the overrides, by policy and client
	 */
	@ReadOperation
	public OverridesDescriptor overrides() {
		Instant now = this.clock.get();
		List<OverrideDescriptor> all = new ArrayList<>();
		this.overrides.list()
			.stream()
			.filter((override) -> !override.isExpiredAt(now))
			.sorted(Comparator.comparing(LimitOverride::policy).thenComparing(LimitOverride::client))
			.forEach((override) -> all.add(OverrideDescriptor.of(override)));
		return new OverridesDescriptor(all);
	}

	/**
	 * Returns one client's override in a policy.
	 * @param policyAndClient the policy name, then the client's segments, which are
	 * joined with {@code /}
	 * @return the override, 404 if it has none in force, or 400 naming what is wrong
	 */
	@ReadOperation
	public WebEndpointResponse<Object> override(@Selector(match = Match.ALL_REMAINING) String[] policyAndClient) {
		try {
			Policy found = policy(PolicyAndClient.policy(policyAndClient));
			LimitOverride override = this.overrides.find(found.name(),
					storedKey(found, PolicyAndClient.client(policyAndClient)));
			return (override == null || override.isExpiredAt(this.clock.get()))
					? new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND)
					: new WebEndpointResponse<>(OverrideDescriptor.of(override));
		}
		catch (BadRequest ex) {
			return ex.response();
		}
	}

	/**
	 * Sets the limits of a client in a policy, from its next call, in place of its
	 * tier's.
	 * @param policy the policy name
	 * @param client the client, its segments joined with {@code /}
	 * @param limits the limits, each as in YAML, such as {@code {"rate":"5000/1m"}}
	 * @param expires when the override ends, an ISO-8601 instant such as
	 * {@code 2027-01-01T00:00:00Z}; {@code null} for never
	 * @return 204, or 400 naming what is wrong, and nothing changes then
	 */
	public WebEndpointResponse<Object> set(String policy, String[] client, @Nullable Object limits,
			@Nullable String expires) {
		try {
			Policy found = policy(policy);
			String storedKey = storedKey(found, client);
			if (limits == null) {
				throw new BadRequest("The body names no 'limits'; send {\"limits\":[{\"rate\":\"5000/1m\"}]}");
			}
			if (!(limits instanceof List<?> specs)) {
				throw new BadRequest(
						"'limits' must be a list of limits, such as [{\"rate\":\"5000/1m\"}] (was " + limits + ")");
			}
			List<Limit> parsed;
			try {
				parsed = this.limitParser.apply(specs, penalty(found));
			}
			catch (RateLimitConfigurationException ex) {
				throw new BadRequest(ex.getMessage());
			}
			Instant until = expiry(expires);
			this.overrides.put(new LimitOverride(found.name(), storedKey, parsed, until));
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NO_CONTENT);
		}
		catch (BadRequest ex) {
			return ex.response();
		}
		catch (RuntimeException ex) {
			return unavailable(ex);
		}
	}

	/**
	 * Removes a client's override in a policy: its tier's limits apply from its next
	 * call.
	 * @param policyAndClient the policy name, then the client's segments, which are
	 * joined with {@code /}
	 * @return 204, or 400 naming what is wrong
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> remove(@Selector(match = Match.ALL_REMAINING) String[] policyAndClient) {
		try {
			Policy found = policy(PolicyAndClient.policy(policyAndClient));
			this.overrides.remove(found.name(), storedKey(found, PolicyAndClient.client(policyAndClient)));
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NO_CONTENT);
		}
		catch (BadRequest ex) {
			return ex.response();
		}
		catch (RuntimeException ex) {
			return unavailable(ex);
		}
	}

	private @Nullable Instant expiry(@Nullable String expires) {
		if (expires == null || expires.isBlank()) {
			return null;
		}
		Instant until;
		try {
			until = Instant.parse(expires.trim());
		}
		catch (DateTimeParseException ex) {
			throw new BadRequest(
					"'expires' must be an ISO-8601 instant such as 2027-01-01T00:00:00Z (was '" + expires + "')");
		}
		if (!until.isAfter(this.clock.get())) {
			throw new BadRequest("'expires' lies in the past (was " + expires + ")");
		}
		return until;
	}

	/**
	 * The policy's penalty, which its limits carry alike; an override's limits take it
	 * too.
	 */
	private static @Nullable Duration penalty(Policy policy) {
		long micros = policy.penaltyMicros();
		return (micros > 0) ? Duration.ofNanos(Math.multiplyExact(micros, 1000L)) : null;
	}

	private Policy policy(String name) {
		Policy found = this.service.policies().find(name);
		if (found == null) {
			throw new BadRequest(
					"No rate-limit policy named '" + name + "'; known: " + this.service.policies().names());
		}
		return found;
	}

	private static String storedKey(Policy policy, String[] segments) {
		String key = String.join("/", segments);
		if (key.isBlank()) {
			throw new BadRequest("No client named");
		}
		KeyResolver resolver = policy.keyResolver();
		try {
			return resolver.storedKey(key);
		}
		catch (IllegalArgumentException ex) {
			throw new BadRequest("Invalid client key: " + ex.getMessage());
		}
	}

	/**
	 * The answer when the store cannot take a change, such as while Redis is down: 503,
	 * and nothing changed.
	 */
	private static WebEndpointResponse<Object> unavailable(RuntimeException failure) {
		return refusal(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE, "Service Unavailable",
				"The overrides could not be changed, try again: their store failed (" + failure.getClass().getName()
						+ ")");
	}

	static WebEndpointResponse<Object> badRequest(String message) {
		return new BadRequest(message).response();
	}

	/**
	 * A refused request's answer, in the one shape every refusal of the endpoint has: the
	 * status, its reason phrase and what went wrong.
	 */
	static WebEndpointResponse<Object> refusal(int status, String error, String message) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", status);
		body.put("error", error);
		body.put("message", message);
		return new WebEndpointResponse<>(body, status);
	}

	/**
	 * A request that names no valid policy, client, limit or expiry: answered 400 with
	 * what is wrong.
	 */
	private static final class BadRequest extends RuntimeException {

		private static final long serialVersionUID = 1L;

		BadRequest(String message) {
			super(message, null, false, false);
		}

		WebEndpointResponse<Object> response() {
			return refusal(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", getMessage());
		}

	}

}
