package dev.ratelimit.spring.key;

/**
 * The one forwarding header that the trusted proxies write. Only that header is read: a
 * proxy passes any other header through untouched, so a client could fill it with
 * addresses of its choosing.
 */
public enum ForwardedHeader {

	/**
	 * {@code X-Forwarded-For: client, proxy1, proxy2} (nginx, most load balancers and
	 * ingresses).
	 */
	X_FORWARDED_FOR,

	/** RFC 7239 {@code Forwarded: for=client, for=proxy1}. */
	FORWARDED

}
