package dev.ratelimit.spring.fuzz;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

import dev.ratelimit.spring.fuzz.HostileHeaders.HostileRequest;
import dev.ratelimit.spring.key.ForwardedHeader;

/**
 * The {@code ip} keys that the "Client address" rules of docs/KEYS-AND-TIERS.md allow for
 * a request, worked out here apart from the starter's resolver: without trusted proxies,
 * or from a peer that is not one, the peer's address whatever the headers say; behind a
 * trusted proxy, the address that the proxy appended (the right-most hop that is not a
 * trusted proxy itself); for a chain that is all the client's (a proxy that passes the
 * header through), the right-most untrusted hop of the one configured header, or the
 * peer. An IPv6 address is keyed by its network when a prefix length below 128 is
 * configured.
 */
final class TrustRules {

	private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

	private static final Pattern IPV6_CHARACTERS = Pattern.compile("[0-9a-fA-F:.]+");

	private final boolean proxiesTrusted;

	private final ForwardedHeader header;

	private final int ipv6PrefixLength;

	/**
	 * Rules for {@link HostileHeaders#TRUSTED_PROXIES} (10.0.0.0/8 and fd00::/8), or for
	 * no trusted proxy.
	 */
	TrustRules(boolean proxiesTrusted, ForwardedHeader header, int ipv6PrefixLength) {
		this.proxiesTrusted = proxiesTrusted;
		this.header = header;
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	/** The keys the rules allow: one, except for a chain that is all the client's. */
	Set<String> addressKeys(HostileRequest request) {
		String peer = key(request.peer().address());
		if (!isTrusted(request.peer().address())) {
			return Set.of(peer);
		}
		if (request.client() != null) {
			return Set.of(key(request.client().address()));
		}
		List<String> chain = chain(request);
		Set<String> allowed = new LinkedHashSet<>();
		allowed.add(peer);
		for (int i = chain.size() - 1; i >= 0; i--) {
			InetAddress hop = parse(chain.get(i));
			if (hop == null || !isTrusted(hop)) {
				allowed.add(hopKey(chain.get(i)));
				return allowed;
			}
		}
		if (!chain.isEmpty()) {
			// every hop a trusted proxy: the left-most is the nearest to the client
			allowed.add(hopKey(chain.get(0)));
		}
		return allowed;
	}

	/**
	 * The key of an address: {@code ip:} and its canonical text, or its network for IPv6
	 * below /128.
	 */
	String key(InetAddress address) {
		if (address instanceof Inet6Address && this.ipv6PrefixLength < 128) {
			byte[] bytes = address.getAddress();
			for (int i = 0; i < bytes.length; i++) {
				int bits = Math.max(0, Math.min(8, this.ipv6PrefixLength - i * 8));
				bytes[i] &= (byte) (0xFF << (8 - bits));
			}
			return "ip:" + literal(bytes).getHostAddress() + "/" + this.ipv6PrefixLength;
		}
		String text = address.getHostAddress();
		int zone = text.indexOf('%');
		return "ip:" + ((zone >= 0) ? text.substring(0, zone) : text);
	}

	private String hopKey(String hop) {
		InetAddress parsed = parse(hop);
		return (parsed != null) ? key(parsed) : "ip:" + hop.trim();
	}

	private boolean isTrusted(InetAddress address) {
		if (!this.proxiesTrusted) {
			return false;
		}
		byte[] bytes = address.getAddress();
		return (address instanceof Inet4Address) ? bytes[0] == 10 : bytes[0] == (byte) 0xfd;
	}

	/**
	 * The hops of the configured header, in order, as docs/KEYS-AND-TIERS.md reads them.
	 */
	private List<String> chain(HostileRequest request) {
		List<String> hops = new ArrayList<>();
		if (this.header == ForwardedHeader.X_FORWARDED_FOR) {
			for (String element : elements(request.forwardedFor())) {
				hops.add(withoutPort(element));
			}
			return hops;
		}
		for (String element : elements(request.forwarded())) {
			for (String pair : element.split(";")) {
				int equals = pair.indexOf('=');
				if (equals > 0 && pair.substring(0, equals).trim().toLowerCase(Locale.ROOT).equals("for")) {
					String node = pair.substring(equals + 1).trim();
					if (node.length() >= 2 && node.startsWith("\"") && node.endsWith("\"")) {
						node = node.substring(1, node.length() - 1);
					}
					hops.add(withoutPort(node));
					break;
				}
			}
		}
		return hops;
	}

	/** The comma-separated elements of every line, blank ones left out. */
	private static List<String> elements(List<String> lines) {
		List<String> elements = new ArrayList<>();
		for (String line : lines) {
			for (String element : line.split(",")) {
				if (!element.isBlank()) {
					elements.add(element.trim());
				}
			}
		}
		return Collections.unmodifiableList(elements);
	}

	private static String withoutPort(String node) {
		if (node.startsWith("[")) {
			int end = node.indexOf(']');
			return (end > 0) ? node.substring(1, end) : node;
		}
		int colon = node.indexOf(':');
		return (colon > 0 && colon == node.lastIndexOf(':')) ? node.substring(0, colon) : node;
	}

	/**
	 * An address literal (brackets and a zone allowed), never a host name; null for
	 * anything else.
	 */
	static InetAddress parse(String text) {
		String address = text.trim();
		if (address.startsWith("[") && address.endsWith("]")) {
			address = address.substring(1, address.length() - 1);
		}
		int zone = address.indexOf('%');
		if (zone >= 0) {
			address = address.substring(0, zone);
		}
		if (IPV4.matcher(address).matches()) {
			String[] parts = address.split("\\.");
			byte[] bytes = new byte[4];
			for (int i = 0; i < 4; i++) {
				int part = Integer.parseInt(parts[i]);
				if (part > 255) {
					return null;
				}
				bytes[i] = (byte) part;
			}
			return literal(bytes);
		}
		boolean literalStart = !address.isEmpty()
				&& (Character.digit(address.charAt(0), 16) >= 0 || address.charAt(0) == ':');
		if (literalStart && address.indexOf(':') >= 0 && IPV6_CHARACTERS.matcher(address).matches()) {
			try {
				return InetAddress.getByName(address);
			}
			catch (UnknownHostException ex) {
				return null;
			}
		}
		return null;
	}

	private static InetAddress literal(byte[] bytes) {
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			throw new IllegalArgumentException(ex);
		}
	}

}
