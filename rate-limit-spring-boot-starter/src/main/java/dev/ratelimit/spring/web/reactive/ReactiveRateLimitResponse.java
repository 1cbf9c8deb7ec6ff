package dev.ratelimit.spring.web.reactive;

import java.util.Objects;

import dev.ratelimit.spring.RateLimitResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;

/**
 * A WebFlux response as a {@code count-if} condition reads it, once the exchange has
 * completed.
 */
final class ReactiveRateLimitResponse implements RateLimitResponse {

	private final ServerHttpResponse response;

	ReactiveRateLimitResponse(ServerHttpResponse response) {
		this.response = Objects.requireNonNull(response, "response must not be null");
	}

	@Override
	public int getStatus() {
		HttpStatusCode status = this.response.getStatusCode();
		// a response that set no status is answered 200 by WebFlux
		return (status != null) ? status.value() : 200;
	}

	@Override
	public @Nullable String getHeader(String name) {
		return this.response.getHeaders().getFirst(name);
	}

}
