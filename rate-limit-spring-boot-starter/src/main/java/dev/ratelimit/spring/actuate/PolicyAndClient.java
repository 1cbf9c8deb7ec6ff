package dev.ratelimit.spring.actuate;

import java.util.Arrays;

/**
 * Reads the segments of an endpoint path that name one client in one policy: the policy,
 * then the client's segments, since a client such as a base64 API key may hold a
 * {@code /}. The operations take all of them as one selector: WebFlux would hand a
 * selector that precedes a selector of the remaining segments to that one too, and the
 * servlet stack would not, so one selector is what both stacks hand over alike.
 */
final class PolicyAndClient {

	private PolicyAndClient() {
	}

	/**
	 * Returns the policy the segments name.
	 * @param segments the segments after the endpoint's path
	 * @return the first segment, or an empty string if there is none
	 */
	static String policy(String[] segments) {
		return (segments.length > 0) ? segments[0] : "";
	}

	/**
	 * Returns the client's segments.
	 * @param segments the segments after the endpoint's path
	 * @return the segments after the first, which may be none
	 */
	static String[] client(String[] segments) {
		return (segments.length > 1) ? Arrays.copyOfRange(segments, 1, segments.length) : new String[0];
	}

}
