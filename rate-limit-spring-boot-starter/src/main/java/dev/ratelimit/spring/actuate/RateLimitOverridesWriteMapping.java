package dev.ratelimit.spring.actuate;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.web.HttpRequestHandler;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Serves {@code POST} to the {@code ratelimitoverrides} endpoint over HTTP in a servlet
 * application. An actuator web operation reads its body as a map of strings, and an
 * override's body holds a list of limits, so this mapping, placed before the actuator's,
 * reads the JSON and hands it to {@link RateLimitOverridesEndpoint#set}. Every other
 * method goes on to the actuator's own mapping. It belongs where the actuator's mappings
 * are, in the management context when the actuator has a port of its own, so that the
 * actuator's security covers it. {@link ReactiveRateLimitOverridesWriteMapping} does the
 * same in a WebFlux application.
 */
public final class RateLimitOverridesWriteMapping implements HandlerMapping, Ordered, HttpRequestHandler {

	private final OverridesWrite write;

	/**
	 * Creates the mapping.
	 * @param endpoint the endpoint
	 * @param path the endpoint's path within the actuator's server, such as
	 * {@code /actuator/ratelimitoverrides}
	 */
	public RateLimitOverridesWriteMapping(RateLimitOverridesEndpoint endpoint, String path) {
		this.write = new OverridesWrite(endpoint, path);
	}

	@Override
	public int getOrder() {
		return OverridesWrite.ORDER;
	}

	@Override
	public @Nullable HandlerExecutionChain getHandler(HttpServletRequest request) {
		return (selectors(request) != null) ? new HandlerExecutionChain(this) : null;
	}

	private String @Nullable [] selectors(HttpServletRequest request) {
		return this.write.selectors(request.getMethod(),
				request.getRequestURI().substring(request.getContextPath().length()));
	}

	@Override
	public void handleRequest(HttpServletRequest request, HttpServletResponse response) throws IOException {
		String[] selectors = Objects.requireNonNull(selectors(request));
		byte[] body = request.getInputStream().readNBytes(OverridesWrite.MAX_BODY_BYTES + 1);
		WebEndpointResponse<Object> answer = this.write.apply(selectors, body);
		response.setStatus(answer.getStatus());
		if (answer.getBody() != null) {
			response.setContentType(MediaType.APPLICATION_JSON_VALUE);
			response.setCharacterEncoding(StandardCharsets.UTF_8.name());
			response.getOutputStream().write(OverridesWrite.json(answer.getBody()));
		}
	}

}
