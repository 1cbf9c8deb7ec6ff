package dev.ratelimit.spring.actuate;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.web.HttpRequestHandler;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.util.UriUtils;

/**
 * Serves {@code POST} to the {@code ratelimitoverrides} endpoint over HTTP. An actuator
 * web operation reads its body as a map of strings, and an override's body holds a list
 * of limits, so this mapping, placed before the actuator's, reads the JSON and hands it
 * to {@link RateLimitOverridesEndpoint#set}. Every other method goes on to the actuator's
 * own mapping. Spring Security's rules for the endpoint's path apply as to any request.
 */
public final class RateLimitOverridesWriteMapping implements HandlerMapping, Ordered, HttpRequestHandler {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final RateLimitOverridesEndpoint endpoint;

	private final String path;

	/**
	 * Creates the mapping.
	 * @param endpoint the endpoint
	 * @param path the endpoint's path within the application, such as
	 * {@code /actuator/ratelimitoverrides}
	 */
	public RateLimitOverridesWriteMapping(RateLimitOverridesEndpoint endpoint, String path) {
		this.endpoint = Objects.requireNonNull(endpoint, "endpoint must not be null");
		this.path = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
	}

	@Override
	public int getOrder() {
		// before the actuator's endpoint mapping (-100), which would answer 405
		return -110;
	}

	@Override
	public @Nullable HandlerExecutionChain getHandler(HttpServletRequest request) {
		if (!"POST".equals(request.getMethod()) || selectors(request) == null) {
			return null;
		}
		return new HandlerExecutionChain(this);
	}

	private String @Nullable [] selectors(HttpServletRequest request) {
		String uri = request.getRequestURI().substring(request.getContextPath().length());
		String prefix = this.path + "/";
		if (!uri.startsWith(prefix)) {
			return null;
		}
		String[] segments = uri.substring(prefix.length()).split("/", -1);
		if (segments.length < 2 || segments[0].isEmpty()) {
			return null;
		}
		return Arrays.stream(segments)
			.map((segment) -> UriUtils.decode(segment, StandardCharsets.UTF_8))
			.toArray(String[]::new);
	}

	@Override
	public void handleRequest(HttpServletRequest request, HttpServletResponse response) throws IOException {
		String[] selectors = Objects.requireNonNull(selectors(request));
		WebEndpointResponse<Object> answer;
		Map<?, ?> body;
		try {
			body = JSON.readValue(request.getInputStream(), Map.class);
		}
		catch (JacksonException ex) {
			body = null;
		}
		if (body == null) {
			answer = RateLimitOverridesEndpoint
				.badRequest("The body must be a JSON object such as {\"limits\":[{\"rate\":\"5000/1m\"}],"
						+ "\"expires\":\"2027-01-01T00:00:00Z\"}");
		}
		else {
			Object expires = body.get("expires");
			answer = this.endpoint.set(selectors[0], Arrays.copyOfRange(selectors, 1, selectors.length),
					body.get("limits"), (expires != null) ? expires.toString() : null);
		}
		response.setStatus(answer.getStatus());
		if (answer.getBody() != null) {
			response.setContentType(MediaType.APPLICATION_JSON_VALUE);
			response.setCharacterEncoding(StandardCharsets.UTF_8.name());
			JSON.writeValue(response.getOutputStream(), answer.getBody());
		}
	}

}
