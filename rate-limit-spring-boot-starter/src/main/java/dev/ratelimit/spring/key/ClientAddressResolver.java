package dev.ratelimit.spring.key;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitContext;

/**
 * Resolves the client address of a request, the {@code ip} key strategy. The {@code Forwarded} and
 * {@code X-Forwarded-For} headers are honoured only when the direct peer is a trusted proxy: the client is then the
 * right-most address in the chain that is not itself a trusted proxy. Headers sent by anyone else are ignored, since
 * a client can write anything into them.
 */
public final class ClientAddressResolver implements KeyResolver {

	/** The key of calls made outside a web request, which have no client address. */
	public static final String NO_ADDRESS_KEY = "ip:none";

	private static final String ADDRESS_PREFIX = "ip:";

	private final List<IpAddressRange> trustedProxies;

	private final ForwardedHeader forwardedHeader;

	/**
	 * Creates a resolver that reads {@code X-Forwarded-For} from trusted proxies.
	 * @param trustedProxies the proxies whose forwarding header is believed
	 */
	public ClientAddressResolver(List<IpAddressRange> trustedProxies) {
		this(trustedProxies, ForwardedHeader.X_FORWARDED_FOR);
	}

	/**
	 * Creates a resolver.
	 * @param trustedProxies the proxies whose forwarding header is believed
	 * @param forwardedHeader the one header those proxies write; the other is never read
	 */
	public ClientAddressResolver(List<IpAddressRange> trustedProxies, ForwardedHeader forwardedHeader) {
		this.trustedProxies = List.copyOf(trustedProxies);
		this.forwardedHeader = forwardedHeader;
	}

	@Override
	public String resolveKey(RateLimitContext context) {
		HttpServletRequest request = context.request();
		return (request != null) ? storedKey(clientAddress(request)) : NO_ADDRESS_KEY;
	}

	/**
	 * Returns the key of a client address, with or without the {@code ip:} prefix.
	 * @param client the address
	 * @return the key, {@code ip:} and the address in canonical form
	 */
	@Override
	public String storedKey(String client) {
		String address = client.startsWith(ADDRESS_PREFIX) ? client.substring(ADDRESS_PREFIX.length()) : client;
		return ADDRESS_PREFIX + canonical(address);
	}

	/**
	 * Returns the address of the client that sent a request.
	 * @param request the request
	 * @return the client address
	 */
	public String clientAddress(HttpServletRequest request) {
		String peer = request.getRemoteAddr();
		if (!isTrusted(peer)) {
			return canonical(peer);
		}
		List<String> chain = forwardedChain(request);
		for (int i = chain.size() - 1; i >= 0; i--) {
			String hop = chain.get(i);
			if (!isTrusted(hop)) {
				return canonical(hop);
			}
		}
		return canonical(chain.isEmpty() ? peer : chain.get(0));
	}

	private boolean isTrusted(String address) {
		if (this.trustedProxies.isEmpty()) {
			return false;
		}
		InetAddress parsed = IpAddressRange.parseAddress(address);
		if (parsed == null) {
			return false;
		}
		for (IpAddressRange range : this.trustedProxies) {
			if (range.contains(parsed)) {
				return true;
			}
		}
		return false;
	}

	private static String canonical(String address) {
		InetAddress parsed = IpAddressRange.parseAddress(address);
		return (parsed != null) ? parsed.getHostAddress() : address.trim();
	}

	private List<String> forwardedChain(HttpServletRequest request) {
		List<String> chain = new ArrayList<>();
		if (this.forwardedHeader == ForwardedHeader.FORWARDED) {
			for (String element : headerValues(request, "Forwarded")) {
				String node = forNode(element);
				if (node != null) {
					chain.add(stripPort(node));
				}
			}
			return chain;
		}
		for (String hop : headerValues(request, "X-Forwarded-For")) {
			chain.add(stripPort(hop));
		}
		return chain;
	}

	private static List<String> headerValues(HttpServletRequest request, String name) {
		Enumeration<String> headers = request.getHeaders(name);
		if (headers == null) {
			return List.of();
		}
		List<String> values = new ArrayList<>();
		for (String header : Collections.list(headers)) {
			for (String value : header.split(",")) {
				if (!value.isBlank()) {
					values.add(value.trim());
				}
			}
		}
		return values;
	}

	private static @Nullable String forNode(String element) {
		for (String pair : element.split(";")) {
			int equals = pair.indexOf('=');
			if (equals > 0 && pair.substring(0, equals).trim().toLowerCase(Locale.ROOT).equals("for")) {
				String value = pair.substring(equals + 1).trim();
				if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
					value = value.substring(1, value.length() - 1);
				}
				return value;
			}
		}
		return null;
	}

	private static String stripPort(String node) {
		if (node.startsWith("[")) {
			int end = node.indexOf(']');
			return (end > 0) ? node.substring(1, end) : node;
		}
		int colon = node.indexOf(':');
		if (colon > 0 && colon == node.lastIndexOf(':')) {
			return node.substring(0, colon);
		}
		return node;
	}

}
