package dev.ratelimit.peers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Asks the caller's Resilience4j {@link RateLimiter} (one per API key, configured by the
 * key's tier) for a permission without waiting, and answers 429 without one.
 */
final class Resilience4jRateLimitInterceptor implements HandlerInterceptor {

	private static final String REFUSED = "{\"title\":\"Too Many Requests\",\"status\":429}";

	private final RateLimiterRegistry registry;

	private final ApiKeyTiers tiers;

	Resilience4jRateLimitInterceptor(RateLimiterRegistry registry, ApiKeyTiers tiers) {
		this.registry = registry;
		this.tiers = tiers;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws IOException {
		String apiKey = request.getHeader(ApiKeyTiers.HEADER);
		RateLimiter limiter = this.registry.rateLimiter((apiKey != null) ? apiKey : "", this.tiers.tierOf(apiKey));
		if (limiter.acquirePermission()) {
			return true;
		}
		response.setStatus(HttpStatus.TOO_MANY_REQUESTS.value());
		response.setContentType(MediaType.APPLICATION_JSON_VALUE);
		response.setCharacterEncoding(StandardCharsets.UTF_8);
		response.getWriter().write(REFUSED);
		return false;
	}

}
