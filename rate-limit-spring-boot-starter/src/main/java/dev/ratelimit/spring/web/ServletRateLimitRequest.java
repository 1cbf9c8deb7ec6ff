package dev.ratelimit.spring.web;

import java.security.Principal;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;

import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.RequestPath;

import dev.ratelimit.spring.RateLimitRequest;

/**
 * A servlet request as the decision path reads it. Its native request, SpEL's
 * {@code #request}, is the {@link HttpServletRequest}.
 */
public final class ServletRateLimitRequest implements RateLimitRequest {

	private final HttpServletRequest request;

	/**
	 * Adapts a servlet request.
	 * @param request the request
	 */
	public ServletRateLimitRequest(HttpServletRequest request) {
		this.request = Objects.requireNonNull(request, "request must not be null");
	}

	@Override
	public String getMethod() {
		return this.request.getMethod();
	}

	@Override
	public String getPath() {
		return RequestPath.parse(this.request.getRequestURI(), this.request.getContextPath())
			.pathWithinApplication()
			.value();
	}

	@Override
	public @Nullable String getHeader(String name) {
		return this.request.getHeader(name);
	}

	@Override
	public List<String> getHeaderValues(String name) {
		Enumeration<String> values = this.request.getHeaders(name);
		return (values != null) ? Collections.list(values) : List.of();
	}

	@Override
	public @Nullable String getRemoteAddr() {
		return this.request.getRemoteAddr();
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		return this.request.getUserPrincipal();
	}

	@Override
	public @Nullable Object getAttribute(String name) {
		return this.request.getAttribute(name);
	}

	@Override
	public void setAttribute(String name, @Nullable Object value) {
		if (value == null) {
			this.request.removeAttribute(name);
		}
		else {
			this.request.setAttribute(name, value);
		}
	}

	@Override
	public HttpServletRequest getNativeRequest() {
		return this.request;
	}

	/**
	 * Returns the request beneath every request wrapper. Spring's
	 * {@code ForwardedHeaderFilter} ({@code server.forward-headers-strategy=framework})
	 * wraps a request in one that answers the left-most {@code X-Forwarded-For} address,
	 * which any client can write, as its remote address, and hides the forwarding
	 * headers: only the trusted proxies decide which forwarded address is believed.
	 */
	@Override
	public RateLimitRequest getReceivedRequest() {
		HttpServletRequest received = this.request;
		while (received instanceof ServletRequestWrapper wrapper
				&& wrapper.getRequest() instanceof HttpServletRequest wrapped) {
			received = wrapped;
		}
		return (received != this.request) ? new ServletRateLimitRequest(received) : this;
	}

	@Override
	public String toString() {
		return "ServletRateLimitRequest[" + this.request.getMethod() + " " + this.request.getRequestURI() + "]";
	}

}
