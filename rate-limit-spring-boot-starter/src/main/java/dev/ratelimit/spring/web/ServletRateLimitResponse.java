package dev.ratelimit.spring.web;

import java.util.Objects;

import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitResponse;

/**
 * A servlet response as the {@code count-if} condition of a policy reads it
 * ({@code #response}).
 */
public final class ServletRateLimitResponse implements RateLimitResponse {

	private final HttpServletResponse response;

	/**
	 * Adapts a servlet response.
	 * @param response the response
	 */
	public ServletRateLimitResponse(HttpServletResponse response) {
		this.response = Objects.requireNonNull(response, "response must not be null");
	}

	/**
	 * Returns the response as the client gets it after an exception left the filter chain
	 * uncommitted: the container answers it 500, whatever status was set.
	 * @param response the response
	 * @return the response with status 500
	 */
	public static RateLimitResponse failed(HttpServletResponse response) {
		return new RateLimitResponse() {

			@Override
			public int getStatus() {
				return HttpServletResponse.SC_INTERNAL_SERVER_ERROR;
			}

			@Override
			public @Nullable String getHeader(String name) {
				return response.getHeader(name);
			}

			@Override
			public String toString() {
				return "ServletRateLimitResponse[500, failed]";
			}

		};
	}

	@Override
	public int getStatus() {
		return this.response.getStatus();
	}

	@Override
	public @Nullable String getHeader(String name) {
		return this.response.getHeader(name);
	}

	@Override
	public String toString() {
		return "ServletRateLimitResponse[" + getStatus() + "]";
	}

}
