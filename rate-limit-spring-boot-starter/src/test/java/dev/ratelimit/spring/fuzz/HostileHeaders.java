package dev.ratelimit.spring.fuzz;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

import dev.ratelimit.spring.key.ForwardedHeader;

/**
 * Arbitrary requests of hostile clients: {@code X-Forwarded-For} and {@code Forwarded}
 * chains (valid, invalid, IPv6 with zones and brackets, obfuscated forms such as
 * {@code 1.2.3} or {@code 0x7f.1}, lists of thousands), API keys, {@code X-Client}
 * values, principal names and costs of any characters (right-to-left marks, combining
 * marks, lone surrogates, NUL, CR LF), and values up to 64 KB. Behind a trusted proxy the
 * request is as the proxy forwards it: mostly with the address the proxy saw appended to
 * the chain the client sent.
 */
final class HostileHeaders {

	/** The trusted proxies of {@link HostileHeaderFuzz}'s proxied applications. */
	static final List<String> TRUSTED_PROXIES = List.of("10.0.0.0/8", "fd00::/8");

	private static final int MAX_VALUE_LENGTH = 64 * 1024;

	private HostileHeaders() {
	}

	/**
	 * An address and how it is written.
	 *
	 * @param address the address
	 * @param text the address as written in a header or as the peer address
	 */
	record Address(InetAddress address, String text) {

		@Override
		public String toString() {
			return this.text;
		}

	}

	/**
	 * A request as it reaches the application.
	 *
	 * @param peer the direct peer ({@code getRemoteAddr()})
	 * @param forwardedFor the {@code X-Forwarded-For} header lines
	 * @param forwarded the {@code Forwarded} header lines
	 * @param client the address that a trusted proxy appended to the chain of its
	 * forwarding header, or null when the chain is all the client's (no proxy, or one
	 * that passes the header through)
	 * @param apiKey the {@code X-API-Key} header lines
	 * @param clientHeader the {@code X-Client} header lines
	 * @param principal the authenticated user's name, or null for an anonymous caller
	 * @param cost the {@code X-Cost} header lines
	 */
	record HostileRequest(Address peer, List<String> forwardedFor, List<String> forwarded, Address client,
			List<String> apiKey, List<String> clientHeader, String principal, List<String> cost) {

		/** The hostile values that the request carries. */
		int values() {
			return this.forwardedFor.size() + this.forwarded.size() + this.apiKey.size() + this.clientHeader.size()
					+ ((this.principal != null) ? 1 : 0) + this.cost.size();
		}

		@Override
		public String toString() {
			return "\n    peer=" + this.peer.text()
					+ ((this.client != null) ? " (proxy appended " + this.client + ")" : "")
					+ lines("X-Forwarded-For", this.forwardedFor) + lines("Forwarded", this.forwarded)
					+ lines("X-API-Key", this.apiKey) + lines("X-Client", this.clientHeader) + ((this.principal != null)
							? "\n    principal=" + RateLimitConfigurations.escape(this.principal) : "")
					+ lines("X-Cost", this.cost);
		}

		private static String lines(String header, List<String> lines) {
			return lines.stream()
				.map((line) -> "\n    " + header + ": " + RateLimitConfigurations.escape(line))
				.collect(Collectors.joining());
		}

	}

	/** Requests straight from clients: any peer, any headers. */
	static Arbitrary<HostileRequest> direct() {
		Arbitrary<Address> peer = Arbitraries.frequencyOf(Tuple.of(3, peerPool()), Tuple.of(2, publicAddress()),
				Tuple.of(1, trustedAddress()));
		return requests(peer, forwardedForLines(), forwardedLines(), Arbitraries.just(null));
	}

	/**
	 * Requests that reached the application through the trusted proxies, which write
	 * {@code header}; a few from elsewhere.
	 */
	static Arbitrary<HostileRequest> behindProxies(ForwardedHeader header) {
		Arbitrary<Address> peer = Arbitraries.frequencyOf(Tuple.of(6, trustedAddress()), Tuple.of(1, publicAddress()));
		Arbitrary<ProxiedChain> chain = Combinators
			.combine((header == ForwardedHeader.FORWARDED) ? forwardedLines() : forwardedForLines(), publicAddress(),
					Arbitraries.of(Append.values()), trustedAddress().list().ofMaxSize(2),
					Arbitraries.integers().between(0, 7))
			.as((lines, client, append, proxies, style) -> ProxiedChain.of(header, lines, client, append, proxies,
					style));
		Arbitrary<HostileRequest> requests = Combinators
			.combine(peer, chain, (header == ForwardedHeader.FORWARDED) ? forwardedForLines() : forwardedLines())
			.as((from, proxied, other) -> (header == ForwardedHeader.FORWARDED)
					? new HostileRequest(from, other, proxied.lines(), proxied.client(), List.of(), List.of(), null,
							List.of())
					: new HostileRequest(from, proxied.lines(), other, proxied.client(), List.of(), List.of(), null,
							List.of()));
		return Combinators.combine(requests, valueLines(apiKey()), valueLines(clientHeader()), principal())
			.as((request, apiKey, clientHeader, principal) -> new HostileRequest(request.peer(), request.forwardedFor(),
					request.forwarded(), request.client(), apiKey, clientHeader, principal, List.of()));
	}

	/** Requests to the route whose cost is the {@code X-Cost} header. */
	static Arbitrary<HostileRequest> costs() {
		return Combinators.combine(peerPool(), valueLines(cost()))
			.as((peer, cost) -> new HostileRequest(peer, List.of(), List.of(), null, List.of(), List.of(), null, cost));
	}

	private static Arbitrary<HostileRequest> requests(Arbitrary<Address> peer, Arbitrary<List<String>> forwardedFor,
			Arbitrary<List<String>> forwarded, Arbitrary<Address> client) {
		return Combinators
			.combine(peer, forwardedFor, forwarded, client, valueLines(apiKey()), valueLines(clientHeader()),
					principal())
			.as((from, xff, fwd, appended, apiKey, clientHeader, principal) -> new HostileRequest(from, xff, fwd,
					appended, apiKey, clientHeader, principal, List.of()));
	}

	/** Where a trusted proxy puts the address it saw. */
	enum Append {

		/**
		 * Nowhere: it passes the client's header through, so the whole chain is the
		 * client's.
		 */
		NONE,

		/**
		 * At the end of the last line ({@code nginx}'s
		 * {@code $proxy_add_x_forwarded_for}).
		 */
		SAME_LINE,

		/** On a line of its own. */
		NEW_LINE

	}

	/**
	 * The forwarding header's lines as the proxy sends them on.
	 *
	 * @param lines the lines
	 * @param client the address the proxy appended, or null
	 */
	record ProxiedChain(List<String> lines, Address client) {

		static ProxiedChain of(ForwardedHeader header, List<String> sent, Address client, Append append,
				List<Address> proxies, int style) {
			if (append == Append.NONE) {
				return new ProxiedChain(sent, null);
			}
			StringBuilder hops = new StringBuilder(hop(header, client, style));
			for (Address proxy : proxies) {
				hops.append(", ").append(hop(header, proxy, style + 1));
			}
			List<String> lines = new ArrayList<>(sent);
			if (append == Append.NEW_LINE || lines.isEmpty()) {
				lines.add(hops.toString());
			}
			else {
				lines.set(lines.size() - 1, lines.get(lines.size() - 1) + ", " + hops);
			}
			return new ProxiedChain(List.copyOf(lines), client);
		}

		/** One hop as proxies write it, with or without a port, quotes and brackets. */
		private static String hop(ForwardedHeader header, Address address, int style) {
			boolean ipv6 = address.text().indexOf(':') >= 0;
			String withPort = switch (style % 4) {
				case 0 -> address.text();
				case 1 -> ipv6 ? "[" + address.text() + "]" : address.text();
				case 2 -> ipv6 ? "[" + address.text() + "]:4711" : address.text() + ":4711";
				default -> address.text();
			};
			if (header == ForwardedHeader.X_FORWARDED_FOR) {
				return withPort;
			}
			String node = (ipv6 || withPort.indexOf(':') >= 0)
					? "\"" + (ipv6 && !withPort.startsWith("[") ? "[" + withPort + "]" : withPort) + "\"" : withPort;
			return switch (style % 3) {
				case 0 -> "for=" + node;
				case 1 -> "For=" + node + ";proto=https;by=10.0.0.1";
				default -> "proto=http;for=" + node;
			};
		}

	}

	/** A few peers, so that some clients come back and get rejected. */
	private static Arbitrary<Address> peerPool() {
		return Arbitraries.of(address("192.0.2.1", "192.0.2.1"), address("198.51.100.7", "198.51.100.7"),
				address("2001:db8::1", "2001:db8:0:0:0:0:0:1"), address("2001:db8::1", "2001:db8::1"),
				address("fe80::1", "fe80:0:0:0:0:0:0:1%eth0"), address("203.0.113.9", "203.0.113.9"));
	}

	/** Public unicast addresses: never in a trusted range, never IPv4-mapped. */
	static Arbitrary<Address> publicAddress() {
		Arbitrary<Address> ipv4 = Combinators
			.combine(Arbitraries.integers().between(11, 223), Arbitraries.integers().between(0, 255),
					Arbitraries.integers().between(0, 255), Arbitraries.integers().between(0, 255),
					Arbitraries.integers().between(0, 2))
			.as((a, b, c, d, form) -> {
				String text = a + "." + b + "." + c + "." + d;
				return address(text, (form == 2) ? "::ffff:" + text : text);
			});
		Arbitrary<Address> ipv6 = Combinators
			.combine(Arbitraries.integers().between(0x2000, 0x3fff),
					Arbitraries.integers().between(0, 0xffff).list().ofSize(7), Arbitraries.integers().between(0, 3))
			.as((first, rest, form) -> ipv6(first, rest, form));
		return Arbitraries.oneOf(ipv4, ipv6);
	}

	/** Addresses in {@link #TRUSTED_PROXIES}. */
	static Arbitrary<Address> trustedAddress() {
		Arbitrary<Address> ipv4 = Combinators
			.combine(Arbitraries.integers().between(0, 255), Arbitraries.integers().between(0, 255),
					Arbitraries.integers().between(0, 255))
			.as((b, c, d) -> address("10." + b + "." + c + "." + d, "10." + b + "." + c + "." + d));
		Arbitrary<Address> ipv6 = Combinators
			.combine(Arbitraries.integers().between(0xfd00, 0xfdff),
					Arbitraries.integers().between(0, 0xffff).list().ofSize(7), Arbitraries.integers().between(0, 3))
			.as((first, rest, form) -> ipv6(first, rest, form));
		return Arbitraries.oneOf(ipv4, ipv6);
	}

	private static Address ipv6(int first, List<Integer> rest, int form) {
		List<Integer> groups = new ArrayList<>(List.of(first));
		groups.addAll(rest);
		String full = groups.stream().map(Integer::toHexString).collect(Collectors.joining(":"));
		String text = switch (form) {
			case 0 -> full;
			case 1 -> compress(groups);
			case 2 -> full.toUpperCase(Locale.ROOT);
			default -> groups.stream().map((group) -> String.format("%04x", group)).collect(Collectors.joining(":"));
		};
		return address(full, text);
	}

	/** The longest run of zero groups written as {@code ::}. */
	private static String compress(List<Integer> groups) {
		int bestStart = -1;
		int bestLength = 0;
		for (int i = 0; i < groups.size(); i++) {
			int length = 0;
			while (i + length < groups.size() && groups.get(i + length) == 0) {
				length++;
			}
			if (length > bestLength) {
				bestStart = i;
				bestLength = length;
			}
		}
		if (bestLength < 2) {
			return groups.stream().map(Integer::toHexString).collect(Collectors.joining(":"));
		}
		String head = groups.subList(0, bestStart).stream().map(Integer::toHexString).collect(Collectors.joining(":"));
		String tail = groups.subList(bestStart + bestLength, groups.size())
			.stream()
			.map(Integer::toHexString)
			.collect(Collectors.joining(":"));
		return head + "::" + tail;
	}

	private static Address address(String literal, String text) {
		try {
			// a literal: never looked up
			return new Address(InetAddress.getByName(literal), text);
		}
		catch (UnknownHostException ex) {
			throw new IllegalArgumentException(literal, ex);
		}
	}

	private static Arbitrary<List<String>> forwardedForLines() {
		Arbitrary<String> line = Arbitraries.frequencyOf(
				Tuple.of(10,
						Combinators.combine(hop().list().ofMaxSize(6), separator())
							.as((hops, separator) -> String.join(separator, hops))),
				Tuple.of(1, hop().list().ofMinSize(100).ofMaxSize(3000).map((hops) -> String.join(", ", hops))),
				Tuple.of(2, hostileText()));
		return line.list().ofMaxSize(3);
	}

	private static Arbitrary<String> hop() {
		return Arbitraries.frequencyOf(Tuple.of(4, addressText()), Tuple.of(3, obfuscated()), Tuple.of(2, shortText()));
	}

	private static Arbitrary<String> separator() {
		return Arbitraries.of(", ", ",", " , ", ",,", ",\t", ", ,");
	}

	private static Arbitrary<List<String>> forwardedLines() {
		Arbitrary<String> node = Arbitraries.frequencyOf(Tuple.of(4, addressText().map(HostileHeaders::quotedNode)),
				Tuple.of(2, addressText()), Tuple.of(3, obfuscated()),
				Tuple.of(1, Arbitraries.of("unknown", "_hidden", "\"_x\"", "\"", "\"\"", "\"[::1\"", "[::1]:80")),
				Tuple.of(2, shortText()));
		Arbitrary<String> pair = Arbitraries.frequencyOf(
				Tuple.of(6,
						Combinators.combine(Arbitraries.of("for", "For", "FOR", " for ", "for "), node)
							.as((name, value) -> name + "=" + value)),
				Tuple.of(2, node.map((value) -> "by=" + value)), Tuple.of(1, Arbitraries.of("proto=https", "host=a.b")),
				Tuple.of(1, Arbitraries.of("for", "=1.2.3.4", "for=\"unterminated", "for=", ";", "for==1.2.3.4",
						"for=1.2.3.4=5", "f\u043er=1.2.3.4")),
				Tuple.of(1, shortText()));
		Arbitrary<String> element = pair.list().ofMinSize(1).ofMaxSize(4).map((pairs) -> String.join(";", pairs));
		Arbitrary<String> line = Arbitraries.frequencyOf(
				Tuple.of(10,
						Combinators.combine(element.list().ofMaxSize(5), separator())
							.as((elements, separator) -> String.join(separator, elements))),
				Tuple.of(1,
						element.list().ofMinSize(100).ofMaxSize(2000).map((elements) -> String.join(", ", elements))),
				Tuple.of(2, hostileText()));
		return line.list().ofMaxSize(3);
	}

	private static String quotedNode(String address) {
		return "\"" + ((address.indexOf(':') >= 0 && !address.startsWith("[")) ? "[" + address + "]" : address) + "\"";
	}

	/** Addresses in the forms they come in: any range, with ports, brackets and zones. */
	private static Arbitrary<String> addressText() {
		Arbitrary<String> any = Arbitraries.oneOf(publicAddress(), trustedAddress(), peerPool()).map(Address::text);
		return Combinators.combine(any, Arbitraries.integers().between(0, 5)).as((text, form) -> switch (form) {
			case 0, 1 -> text;
			case 2 -> text.indexOf(':') >= 0 ? "[" + text + "]" : text + ":8080";
			case 3 -> text.indexOf(':') >= 0 ? "[" + text + "]:443" : text;
			case 4 -> text.indexOf(':') >= 0 && text.indexOf('%') < 0 ? text + "%eth0" : " " + text + " ";
			default -> text.indexOf(':') >= 0 && text.indexOf('%') < 0 ? "[" + text + "%25en0]:80" : text;
		});
	}

	/** What is not quite an address, or is one only to a lenient parser. */
	private static Arbitrary<String> obfuscated() {
		return Arbitraries.of("1.2.3", "0x7f.1", "0177.0.0.1", "127.1", "2130706433", "01.02.03.04", "1.2.3.4.5",
				"256.1.1.1", "1.2.3.-4", "::ffff:1.2.3.4", "::ffff:10.0.0.1", "::1", "::", "0:0:0:0:0:0:0:1", "[::1",
				"::1]", "[[::1]]", ".1:2", ":::", "1::2::3", "localhost", "example.com", "1.2.3.4%eth0",
				"\u0661.\u0662.\u0663.\u0664", "\uff11.\uff12.\uff13.\uff14", "1.2.3.4\u0000", "10.0.0.1 ", " 10.0.0.1",
				"10.0.0.1:99999", "[fd00::1]:x", "fd00::1%", "fd00::1%%", "::ffff:0a00:0001", "0x0a.0.0.1", "010.0.0.1",
				"10.0.0.01", "[10.0.0.1]", "1.2.3.4:", ":1.2.3.4", "1.2.3.4:80:80", "1234:5678", "fe80::1%eth0%eth1",
				"2001:db8::1/64", "10.0.0.0/8", "*", "-", "unknown", "_obf");
	}

	private static Arbitrary<List<String>> valueLines(Arbitrary<String> value) {
		return Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(List.<String>of())),
				Tuple.of(6, value.map(List::of)), Tuple.of(1, value.list().ofMinSize(2).ofMaxSize(3)));
	}

	private static Arbitrary<String> apiKey() {
		return Arbitraries.frequencyOf(Tuple.of(5, hostileText()), Tuple.of(2, Arbitraries.of("demo-free", "abc",
				" abc ", "abc\u0001", "", " ", "\u0000", "\u00a0", "key:abc", "ip:192.0.2.1")));
	}

	private static Arbitrary<String> clientHeader() {
		return Arbitraries.frequencyOf(Tuple.of(5, hostileText()),
				Tuple.of(2,
						Arbitraries.of("ip:192.0.2.1", "ip:none", "key:" + "ab".repeat(32), "user:admin", "header:x",
								"expr:x", "global", "", " ", "\t", "\u2028", "acme")),
				Tuple.of(1, addressText().map((address) -> "ip:" + address)));
	}

	private static Arbitrary<String> principal() {
		Arbitrary<String> name = Arbitraries.frequencyOf(Tuple.of(5, hostileText()),
				Tuple.of(2, Arbitraries.of("admin", "ip:192.0.2.1", "user:admin", "key:x", " ", "\u0000")));
		// Spring Security's User refuses an empty name
		return Arbitraries.frequencyOf(Tuple.of(2, Arbitraries.just(null)),
				Tuple.of(3, name.filter((value) -> !value.isEmpty())));
	}

	private static Arbitrary<String> cost() {
		return Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.integers().between(0, 150).map(Object::toString)),
				Tuple.of(3,
						Arbitraries.of("-1", "-0", "9223372036854775807", "9223372036854775808", " 1", "1 ", "+1",
								"0x10", "1e3", "\u0661", "", "1.5", "01", "\u0000", "1\r\n", "NaN", "Infinity")),
				Tuple.of(2, hostileText()), Tuple.of(1, Arbitraries.longs().map(Object::toString)));
	}

	/**
	 * Any characters, with the ones that matter to headers and keys much more often than
	 * chance.
	 */
	static Arbitrary<String> hostileText() {
		return Arbitraries.frequencyOf(Tuple.of(8, shortText()), Tuple.of(4, Arbitraries.strings()
			.withChars("\r\n\t\u0000\u202E\u200F\u200B\uFEFF\u0301\u0308\uD800\uDC00\u007F\u0085\u2028,;=\"[]:%\\ ")
			.withChars("ab19.-")
			.ofMaxLength(30)),
				Tuple.of(2,
						Arbitraries.of("a\r\nX-Injected: 1", "\r\n\r\nHTTP/1.1 200 OK", "\u202Egnp.exe", "e\u0301",
								"\uD83D\uDE00", "\uDE00\uD83D", "\u0000", "%00", "%0d%0a", "${jndi:ldap://x}", "#{1+1}",
								"\u0130", "\u00df", "\uFFFF", "\uFFFE")),
				Tuple.of(1, big()));
	}

	private static Arbitrary<String> shortText() {
		return Arbitraries.strings().all().ofMaxLength(24);
	}

	/** A chunk repeated to between 1 KB and 64 KB. */
	private static Arbitrary<String> big() {
		return Combinators
			.combine(Arbitraries.strings().all().ofMinLength(1).ofMaxLength(8),
					Arbitraries.integers().between(1024, MAX_VALUE_LENGTH))
			.as((chunk, length) -> chunk.repeat(length / chunk.length() + 1).substring(0, length));
	}

}
