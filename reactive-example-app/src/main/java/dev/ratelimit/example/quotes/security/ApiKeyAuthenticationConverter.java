package dev.ratelimit.example.quotes.security;

import reactor.core.publisher.Mono;

import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.web.server.ServerWebExchange;

/**
 * Reads a caller's API key from the header the rate limiter keys callers by
 * ({@code ratelimit.client.api-key-header}, {@code X-API-Key} here). No key, or a blank
 * one, reads nothing: the caller stays anonymous, as the rate limiter treats it.
 */
public class ApiKeyAuthenticationConverter implements ServerAuthenticationConverter {

	private final String header;

	public ApiKeyAuthenticationConverter(String header) {
		this.header = header;
	}

	@Override
	public Mono<Authentication> convert(ServerWebExchange exchange) {
		String apiKey = exchange.getRequest().getHeaders().getFirst(this.header);
		if (apiKey == null || apiKey.isBlank()) {
			return Mono.empty();
		}
		return Mono.just(UsernamePasswordAuthenticationToken.unauthenticated(apiKey, apiKey));
	}

}
