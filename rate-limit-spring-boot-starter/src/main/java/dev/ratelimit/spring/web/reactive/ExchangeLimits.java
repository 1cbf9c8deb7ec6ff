package dev.ratelimit.spring.web.reactive;

import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.spring.web.RequestLimitState;

/**
 * The rate-limit state of one exchange ({@link RequestLimitState}), kept in an exchange
 * attribute by the {@link RateLimitWebFilter}.
 */
final class ExchangeLimits extends RequestLimitState {

	static final String ATTRIBUTE = ExchangeLimits.class.getName();

	static @Nullable ExchangeLimits of(ServerWebExchange exchange) {
		return (exchange.getAttribute(ATTRIBUTE) instanceof ExchangeLimits limits) ? limits : null;
	}

}
