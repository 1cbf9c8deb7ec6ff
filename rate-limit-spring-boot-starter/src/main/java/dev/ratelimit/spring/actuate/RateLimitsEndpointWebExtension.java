package dev.ratelimit.spring.actuate;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;

/**
 * The {@code ratelimits} endpoint over HTTP: a client's state and its reset answer
 * {@code 503 Service Unavailable}, saying whether the backend timed out or cannot be
 * reached (the details go to the log), while it fails, rather than a bare {@code 500}; an
 * unknown policy is {@code 404} when read and {@code 400} when reset, as the endpoint
 * itself answers.
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

	private static final Log logger = LogFactory.getLog(RateLimitsEndpointWebExtension.class);

	private final RateLimitsEndpoint delegate;

	/**
	 * Creates the extension.
	 * @param delegate the endpoint that does the work
	 */
	public RateLimitsEndpointWebExtension(RateLimitsEndpoint delegate) {
		this.delegate = Objects.requireNonNull(delegate, "delegate must not be null");
	}

	/**
	 * Returns a client's state in a policy without consuming anything.
	 * @param policyAndKey the policy, then the client's segments, as the key strategy
	 * identifies it
	 * @param tier the tier whose limits to show; the default tier if {@code null}
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 * @return the state; {@code 404} if there is no such policy, {@code 503} if the
	 * backend cannot be reached
	 */
	@ReadOperation
	public WebEndpointResponse<Object> key(@Selector(match = Match.ALL_REMAINING) String[] policyAndKey,
			@Nullable String tier, @Nullable String strategy) {
		return key(PolicyAndClient.policy(policyAndKey), PolicyAndClient.client(policyAndKey), tier, strategy);
	}

	private WebEndpointResponse<Object> key(String policy, String[] key, @Nullable String tier,
			@Nullable String strategy) {
		try {
			KeyStateDescriptor state = this.delegate.key(policy, key, tier, strategy);
			return (state != null) ? new WebEndpointResponse<>(state)
					: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		catch (QueryTimeoutException | DataAccessResourceFailureException ex) {
			return unavailable(policy, "read", ex);
		}
	}

	/**
	 * Returns a client's state in a policy without consuming anything, the client named
	 * as the policy's key strategy reads it.
	 * @param policy the policy name
	 * @param key the client
	 * @param tier the tier whose limits to show; the default tier if {@code null}
	 * @return the state; {@code 404} if there is no such policy, {@code 503} if the
	 * backend cannot be reached
	 */
	public WebEndpointResponse<Object> key(String policy, String key, @Nullable String tier) {
		return key(policy, new String[] { key }, tier, null);
	}

	/**
	 * Forgets a client's state in every limit of a policy, whatever its tier, the client
	 * named as the policy's key strategy reads it.
	 * @param policy the policy name
	 * @param key the client
	 * @return {@code 204}; {@code 503} if the backend cannot be reached, in which case
	 * the state may be partly reset
	 */
	public WebEndpointResponse<Object> reset(String policy, String key) {
		return reset(policy, new String[] { key }, null);
	}

	/**
	 * Forgets a client's state in every limit of a policy, whatever its tier.
	 * @param policyAndKey the policy, then the client's segments, as the key strategy
	 * identifies it
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 * @return {@code 204}; {@code 503} if the backend cannot be reached, in which case
	 * the state may be partly reset
	 */
	@DeleteOperation(produces = { RateLimitsEndpoint.ACTUATOR_V3_JSON, RateLimitsEndpoint.JSON })
	public WebEndpointResponse<Object> reset(@Selector(match = Match.ALL_REMAINING) String[] policyAndKey,
			@Nullable String strategy) {
		return reset(PolicyAndClient.policy(policyAndKey), PolicyAndClient.client(policyAndKey), strategy);
	}

	private WebEndpointResponse<Object> reset(String policy, String[] key, @Nullable String strategy) {
		try {
			this.delegate.reset(policy, key, strategy);
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NO_CONTENT);
		}
		catch (QueryTimeoutException | DataAccessResourceFailureException ex) {
			return unavailable(policy, "reset", ex);
		}
	}

	/**
	 * Answers 503 with what failed, in fixed words: the exception's message names hosts
	 * and ports, which the log gets but a caller of the endpoint (reads are often left
	 * open) does not.
	 */
	private static WebEndpointResponse<Object> unavailable(String policy, String action, RuntimeException ex) {
		logger.warn("Could not " + action + " the state of rate-limit policy '" + policy + "'", ex);
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		body.put("error", "Service Unavailable");
		body.put("policy", policy);
		body.put("message",
				"Could not " + action + " rate-limit state: the backend "
						+ ((ex instanceof QueryTimeoutException) ? "did not answer in time" : "cannot be reached")
						+ "; see the rateLimit health contributor and the application's log");
		return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
	}

}
