package dev.ratelimit.spring.actuate;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.jmx.annotation.EndpointJmxExtension;

/**
 * The {@code ratelimits} endpoint over JMX: a client is one string argument there, taken
 * whole. Over HTTP the rest of the path names it, so that it may contain {@code /}, which
 * the endpoint's own operations take as an array of segments; JMX would offer that array
 * as an untyped argument and split a string given for it at commas.
 */
@EndpointJmxExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointJmxExtension {

	private final RateLimitsEndpoint delegate;

	/**
	 * Creates the extension.
	 * @param delegate the endpoint that does the work
	 */
	public RateLimitsEndpointJmxExtension(RateLimitsEndpoint delegate) {
		this.delegate = Objects.requireNonNull(delegate, "delegate must not be null");
	}

	/**
	 * Returns a client's state in a policy without consuming anything.
	 * @param policy the policy name
	 * @param key the client, as the key strategy identifies it
	 * @param tier the tier whose limits to show; the default tier if {@code null}
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 * @return the state, or {@code null} if there is no such policy
	 */
	@ReadOperation
	public @Nullable KeyStateDescriptor key(@Selector String policy, @Selector String key, @Nullable String tier,
			@Nullable String strategy) {
		return this.delegate.key(policy, new String[] { key }, tier, strategy);
	}

	/**
	 * Forgets a client's state in every limit of a policy, whatever its tier.
	 * @param policy the policy name
	 * @param key the client, as the key strategy identifies it
	 * @param strategy the key strategy that keyed the client, if not the policy's, as in
	 * a policy's {@code key}
	 */
	@DeleteOperation
	public void reset(@Selector String policy, @Selector String key, @Nullable String strategy) {
		this.delegate.reset(policy, new String[] { key }, strategy);
	}

}
