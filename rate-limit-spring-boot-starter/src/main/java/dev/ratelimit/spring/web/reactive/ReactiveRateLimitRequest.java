package dev.ratelimit.spring.web.reactive;

import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;
import java.util.Objects;

import dev.ratelimit.spring.RateLimitRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * A WebFlux exchange as the decision path reads it. The principal is resolved before the
 * request is built (it is a {@code Mono} in WebFlux), so that keys, tiers and SpEL read
 * it without blocking. SpEL reads {@code #request} as the {@link ServerHttpRequest} and
 * {@code #exchange} as the {@link ServerWebExchange}.
 */
public final class ReactiveRateLimitRequest implements RateLimitRequest {

	private final ServerWebExchange exchange;

	private final @Nullable Principal principal;

	/**
	 * Creates the request of an exchange.
	 * @param exchange the exchange
	 * @param principal the authenticated caller, or {@code null} for an anonymous one
	 */
	public ReactiveRateLimitRequest(ServerWebExchange exchange, @Nullable Principal principal) {
		this.exchange = Objects.requireNonNull(exchange, "exchange must not be null");
		this.principal = principal;
	}

	/**
	 * Returns the exchange.
	 * @return the exchange
	 */
	public ServerWebExchange exchange() {
		return this.exchange;
	}

	@Override
	public String getMethod() {
		return this.exchange.getRequest().getMethod().name();
	}

	@Override
	public String getPath() {
		return this.exchange.getRequest().getPath().pathWithinApplication().value();
	}

	@Override
	public @Nullable String getHeader(String name) {
		return this.exchange.getRequest().getHeaders().getFirst(name);
	}

	@Override
	public List<String> getHeaderValues(String name) {
		List<String> values = this.exchange.getRequest().getHeaders().get(name);
		return (values != null) ? values : List.of();
	}

	@Override
	public @Nullable String getRemoteAddr() {
		InetSocketAddress remote = this.exchange.getRequest().getRemoteAddress();
		if (remote == null) {
			return null;
		}
		// the address the peer connected from, never a name to look up
		return (remote.getAddress() != null) ? remote.getAddress().getHostAddress() : remote.getHostString();
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		return this.principal;
	}

	@Override
	public @Nullable Object getAttribute(String name) {
		return this.exchange.getAttribute(name);
	}

	@Override
	public void setAttribute(String name, @Nullable Object value) {
		if (value == null) {
			this.exchange.getAttributes().remove(name);
		}
		else {
			this.exchange.getAttributes().put(name, value);
		}
	}

	@Override
	public ServerHttpRequest getNativeRequest() {
		return this.exchange.getRequest();
	}

	@Override
	public @Nullable Object getVariable(String name) {
		return "exchange".equals(name) ? this.exchange : null;
	}

	@Override
	public String toString() {
		return "ReactiveRateLimitRequest[" + getMethod() + " " + this.exchange.getRequest().getPath().value() + "]";
	}

}
