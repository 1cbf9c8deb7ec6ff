package dev.ratelimit.spring;

import org.jspecify.annotations.Nullable;

/**
 * The response to a web request, as the {@code count-if} condition of a policy reads it
 * ({@code #response}), whatever the web stack. Method names follow
 * {@code HttpServletResponse}'s, so that {@code #response.status} reads the status. The
 * starter adapts the servlet response ({@code web.ServletRateLimitResponse}).
 */
public interface RateLimitResponse {

	/**
	 * Returns the status of the response.
	 * @return the status, such as {@code 401}
	 */
	int getStatus();

	/**
	 * Returns the first value of a header of the response.
	 * @param name the header name, in any case
	 * @return the value, or {@code null} if the response has no such header
	 */
	@Nullable String getHeader(String name);

}
