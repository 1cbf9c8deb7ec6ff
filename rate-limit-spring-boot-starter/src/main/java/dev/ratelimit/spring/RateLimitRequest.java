package dev.ratelimit.spring;

import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The web request of a call, as key resolvers, tier resolvers and SpEL expressions read
 * it, whatever the web stack. Method names follow {@code HttpServletRequest}'s. The
 * starter adapts the servlet request ({@code web.ServletRateLimitRequest}).
 */
public interface RateLimitRequest {

	/**
	 * Returns the HTTP method.
	 * @return the method, such as {@code GET}
	 */
	String getMethod();

	/**
	 * Returns the path of the request within the application, without the context path
	 * and the query, as received (not decoded).
	 * @return the path, such as {@code /api/geocode}
	 */
	String getPath();

	/**
	 * Returns the first value of a header.
	 * @param name the header name, in any case
	 * @return the value, or {@code null} if the request has no such header
	 */
	@Nullable String getHeader(String name);

	/**
	 * Returns every value of a header, one per header line, as received.
	 * @param name the header name, in any case
	 * @return the values, empty if the request has no such header
	 */
	List<String> getHeaderValues(String name);

	/**
	 * Returns the address of the peer that sent the request, as this request answers it.
	 * @return the address, or {@code null} if it is not known
	 */
	@Nullable String getRemoteAddr();

	/**
	 * Returns the principal that the web stack authenticated.
	 * @return the principal, or {@code null} for an anonymous caller
	 */
	@Nullable Principal getUserPrincipal();

	/**
	 * Returns an attribute of the request.
	 * @param name the attribute name
	 * @return the value, or {@code null} if there is none
	 */
	@Nullable Object getAttribute(String name);

	/**
	 * Sets an attribute of the request.
	 * @param name the attribute name
	 * @param value the value, or {@code null} to remove the attribute
	 */
	void setAttribute(String name, @Nullable Object value);

	/**
	 * Returns the web stack's own request, which SpEL expressions read as
	 * {@code #request}.
	 * @return the request, such as the {@code HttpServletRequest}
	 */
	Object getNativeRequest();

	/**
	 * Returns the request as the web server received it, beneath any wrapper that
	 * rewrites the peer address or hides forwarding headers (as Spring's
	 * {@code ForwardedHeaderFilter} does). The {@code ip} key reads the peer and the
	 * forwarding headers from it.
	 * @return the request as received; by default this request
	 */
	default RateLimitRequest getReceivedRequest() {
		return this;
	}

	/**
	 * Returns a variable of the web stack that SpEL expressions read besides
	 * {@code #request}, such as WebFlux's {@code #exchange}.
	 * @param name the variable's name, without {@code #}
	 * @return the value, or {@code null} if this web stack has no such variable
	 */
	default @Nullable Object getVariable(String name) {
		return null;
	}

}
