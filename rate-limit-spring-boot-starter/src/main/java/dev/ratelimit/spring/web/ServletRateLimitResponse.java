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
