package dev.ratelimit.spring.key;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitRequest;

/**
 * Resolves the client address of a request, the {@code ip} key strategy. The
 * {@code Forwarded} and {@code X-Forwarded-For} headers are honoured only when the direct
 * peer is a trusted proxy. IPv6 addresses can be keyed by a prefix, since an IPv6 client
 * usually holds a whole network.
 */
public final class ClientAddressResolver implements KeyResolver {

	/**
	 * The key of calls made outside a web request, and of requests whose peer address is
	 * not known: they have no client address.
	 */
	public static final String NO_ADDRESS_KEY = "ip:none";

	/** The IPv6 prefix length that keys each address on its own. */
	public static final int WHOLE_IPV6_ADDRESS = 128;

	private static final String ADDRESS_PREFIX = "ip:";

	private final List<IpAddressRange> trustedProxies;

	private final ForwardedHeader forwardedHeader;

	private final int ipv6PrefixLength;

	/**
	 * Creates a resolver that reads {@code X-Forwarded-For} from trusted proxies and keys
	 * each address on its own.
	 * @param trustedProxies the proxies whose forwarding header is believed
	 */
	public ClientAddressResolver(List<IpAddressRange> trustedProxies) {
		this(trustedProxies, ForwardedHeader.X_FORWARDED_FOR);
	}

	/**
	 * Creates a resolver that keys each address on its own.
	 * @param trustedProxies the proxies whose forwarding header is believed
	 * @param forwardedHeader the one header those proxies write; the other is never read
	 */
	public ClientAddressResolver(List<IpAddressRange> trustedProxies, ForwardedHeader forwardedHeader) {
		this(trustedProxies, forwardedHeader, WHOLE_IPV6_ADDRESS);
	}

	/**
	 * Creates a resolver.
	 * @param trustedProxies the proxies whose forwarding header is believed
	 * @param forwardedHeader the one header those proxies write; the other is never read
	 * @param ipv6PrefixLength the length of the IPv6 prefix that keys a client, from 1 to
	 * 128: 64 keys all the addresses of a /64 network as one client; IPv4 addresses are
	 * always keyed whole
	 * @throws IllegalArgumentException if the prefix length is out of range
	 */
	public ClientAddressResolver(List<IpAddressRange> trustedProxies, ForwardedHeader forwardedHeader,
			int ipv6PrefixLength) {
		if (ipv6PrefixLength < 1 || ipv6PrefixLength > WHOLE_IPV6_ADDRESS) {
			throw new IllegalArgumentException(
					"the IPv6 prefix length must be from 1 to 128, but is " + ipv6PrefixLength);
		}
		this.trustedProxies = List.copyOf(trustedProxies);
		this.forwardedHeader = forwardedHeader;
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	@Override
	public String resolveKey(RateLimitContext context) {
		RateLimitRequest request = context.request();
		String address = (request != null) ? clientAddress(request) : null;
		return (address != null) ? addressKey(address) : NO_ADDRESS_KEY;
	}

	/**
	 * Returns the key of a client address, with or without the {@code ip:} prefix:
	 * {@code ip:} and the address in canonical form, or, for an IPv6 address keyed by a
	 * shorter prefix than 128, its network and the prefix length
	 * ({@code ip:2001:db8:1:2:0:0:0:0/64}). A key in that form gives itself back.
	 * @param client the address
	 * @return the key
	 * @throws IllegalArgumentException if an IPv6 network is given with another prefix
	 * length than the keys'
	 */
	@Override
	public String storedKey(String client) {
		String address = client.startsWith(ADDRESS_PREFIX) ? client.substring(ADDRESS_PREFIX.length()) : client;
		int slash = address.indexOf('/');
		if (this.ipv6PrefixLength < WHOLE_IPV6_ADDRESS && slash >= 0
				&& IpAddressRange.parseAddress(address.substring(0, slash)) instanceof Inet6Address) {
			if (!address.substring(slash + 1).trim().equals(Integer.toString(this.ipv6PrefixLength))) {
				throw new IllegalArgumentException("'" + client + "' does not name a /" + this.ipv6PrefixLength
						+ " network, by which IPv6 clients are keyed (ratelimit.client.ipv6-prefix-length)");
			}
			address = address.substring(0, slash);
		}
		return addressKey(canonical(address));
	}

	/**
	 * Returns the key of an address in canonical form: the address, or its network when
	 * IPv6 addresses are keyed by a shorter prefix. Only then is the address parsed again
	 * (a canonical IPv4 address has no colon).
	 */
	private String addressKey(String canonicalAddress) {
		if (this.ipv6PrefixLength < WHOLE_IPV6_ADDRESS && canonicalAddress.indexOf(':') >= 0
				&& IpAddressRange.parseAddress(canonicalAddress) instanceof Inet6Address parsed) {
			return ADDRESS_PREFIX + IpAddressRange.network(parsed, this.ipv6PrefixLength).getHostAddress() + "/"
					+ this.ipv6PrefixLength;
		}
		return ADDRESS_PREFIX + canonicalAddress;
	}

	/**
	 * Returns the length of the IPv6 prefix that keys a client.
	 * @return the prefix length, 128 when each address is keyed on its own
	 */
	public int ipv6PrefixLength() {
		return this.ipv6PrefixLength;
	}

	/**
	 * Returns the address of the client that sent a request. Behind a trusted proxy it is
	 * the right-most address in the forwarded chain that is not itself a trusted proxy;
	 * headers sent by anyone else are ignored, since a client can write anything into
	 * them. The peer and the headers are read from the request as the web server received
	 * it ({@link RateLimitRequest#getReceivedRequest()}), beneath any request wrapper
	 * that answers another remote address (as Spring's {@code ForwardedHeaderFilter}
	 * does).
	 * @param request the request
	 * @return the client address, or {@code null} if the peer's address is not known
	 */
	public @Nullable String clientAddress(RateLimitRequest request) {
		RateLimitRequest received = request.getReceivedRequest();
		String peer = received.getRemoteAddr();
		if (peer == null) {
			return null;
		}
		if (!isTrusted(peer)) {
			return canonical(peer);
		}
		List<String> chain = forwardedChain(received);
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

	private List<String> forwardedChain(RateLimitRequest request) {
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

	private static List<String> headerValues(RateLimitRequest request, String name) {
		List<String> values = new ArrayList<>();
		for (String header : request.getHeaderValues(name)) {
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
