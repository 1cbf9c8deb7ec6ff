package dev.ratelimit.spring.actuate;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.web.util.UriUtils;

/**
 * The {@code POST} to the {@code ratelimitoverrides} endpoint, whichever web stack serves
 * it: which policy and client its path names, and what its JSON body sets. The servlet
 * and the WebFlux mappings only read the request and write the answer, so that both
 * accept and refuse the same requests with the same status and message.
 */
final class OverridesWrite {

	/**
	 * The most bytes of a body that are read: an override holds a few limits, far less. A
	 * mapping reads one byte more, so that a larger body is answered 413, not parsed
	 * short.
	 */
	static final int MAX_BODY_BYTES = 64 * 1024;

	/**
	 * The order of either stack's mapping: before the actuator's endpoint mapping (-100),
	 * which would answer 405.
	 */
	static final int ORDER = -110;

	private static final int STATUS_CONTENT_TOO_LARGE = 413;

	/** A valid body, which the messages show. */
	private static final String EXAMPLE = "{\"limits\":[{\"rate\":\"5000/1m\"}],\"expires\":\"2027-01-01T00:00:00Z\"}";

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final RateLimitOverridesEndpoint endpoint;

	private final String path;

	/**
	 * Creates the write.
	 * @param endpoint the endpoint the write hands the override to
	 * @param path the endpoint's path within the application, such as
	 * {@code /actuator/ratelimitoverrides}
	 */
	OverridesWrite(RateLimitOverridesEndpoint endpoint, String path) {
		this.endpoint = Objects.requireNonNull(endpoint, "endpoint must not be null");
		this.path = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
	}

	/**
	 * Returns the policy and client segments that a request names, decoded, when it is a
	 * {@code POST} to one client of the endpoint.
	 * @param method the request's method
	 * @param pathWithinApplication the request's path without the context path, as sent
	 * (still encoded)
	 * @return the policy then the client's segments, or {@code null} when the request is
	 * not such a {@code POST}
	 */
	String @Nullable [] selectors(String method, String pathWithinApplication) {
		String prefix = this.path + "/";
		if (!"POST".equals(method) || !pathWithinApplication.startsWith(prefix)) {
			return null;
		}
		String[] segments = pathWithinApplication.substring(prefix.length()).split("/", -1);
		if (segments.length < 2 || segments[0].isEmpty()) {
			return null;
		}
		return Arrays.stream(segments)
			.map((segment) -> UriUtils.decode(segment, StandardCharsets.UTF_8))
			.toArray(String[]::new);
	}

	/**
	 * Reads a body and sets the override it describes. It may block: the store may be
	 * remote.
	 * @param selectors the policy then the client's segments
	 * @param body the body's bytes, at most {@link #MAX_BODY_BYTES} plus one
	 * @return the endpoint's answer: 204, or 400, 413 or 503 with what is wrong
	 */
	WebEndpointResponse<Object> apply(String[] selectors, byte[] body) {
		if (body.length > MAX_BODY_BYTES) {
			return RateLimitOverridesEndpoint.refusal(STATUS_CONTENT_TOO_LARGE, "Content Too Large",
					"The body must be at most " + MAX_BODY_BYTES + " bytes; an override is a JSON object such as "
							+ EXAMPLE);
		}
		Map<?, ?> fields;
		try {
			fields = JSON.readValue(body, Map.class);
		}
		catch (JacksonException ex) {
			fields = null;
		}
		if (fields == null) {
			return RateLimitOverridesEndpoint.badRequest("The body must be a JSON object such as " + EXAMPLE);
		}
		Object expires = fields.get("expires");
		return this.endpoint.set(PolicyAndClient.policy(selectors), PolicyAndClient.client(selectors),
				fields.get("limits"), (expires != null) ? expires.toString() : null);
	}

	/**
	 * Returns an answer's body as JSON.
	 * @param body the body of an answer
	 * @return its UTF-8 JSON
	 */
	static byte[] json(Object body) {
		return JSON.writeValueAsBytes(body);
	}

}
