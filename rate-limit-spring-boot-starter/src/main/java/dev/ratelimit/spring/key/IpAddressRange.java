package dev.ratelimit.spring.key;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A block of IPv4 or IPv6 addresses written in CIDR notation ({@code 10.0.0.0/8},
 * {@code fd00::/8}) or a single address. Parsing never looks up a host name. Immutable.
 */
public final class IpAddressRange {

	private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

	private final String text;

	private final byte[] network;

	private final int prefixLength;

	private IpAddressRange(String text, byte[] network, int prefixLength) {
		this.text = text;
		this.network = network;
		this.prefixLength = prefixLength;
	}

	/**
	 * Parses a range.
	 * @param text a CIDR block such as {@code 10.0.0.0/8} or a single address
	 * @return the range
	 * @throws IllegalArgumentException saying what is wrong
	 */
	public static IpAddressRange parse(String text) {
		String trimmed = text.trim();
		int slash = trimmed.indexOf('/');
		String address = (slash < 0) ? trimmed : trimmed.substring(0, slash);
		InetAddress parsed = parseAddress(address);
		if (parsed == null) {
			throw new IllegalArgumentException("'" + text + "' is not an IP address or CIDR block such as 10.0.0.0/8");
		}
		byte[] bytes = parsed.getAddress();
		int maxPrefix = bytes.length * 8;
		int prefix = maxPrefix;
		if (slash >= 0) {
			String length = trimmed.substring(slash + 1);
			if (!length.matches("\\d{1,3}") || Integer.parseInt(length) > maxPrefix) {
				throw new IllegalArgumentException(
						"'" + text + "' has an invalid prefix length; use 0 to " + maxPrefix);
			}
			prefix = Integer.parseInt(length);
		}
		return new IpAddressRange(trimmed, mask(bytes, prefix), prefix);
	}

	/**
	 * Parses an IP address literal without any name look-up. Accepts brackets around an
	 * IPv6 address and drops an IPv6 zone.
	 * @param text the address
	 * @return the address, or {@code null} if the text is not an address literal
	 */
	public static @Nullable InetAddress parseAddress(String text) {
		String address = text.trim();
		if (address.startsWith("[") && address.endsWith("]")) {
			address = address.substring(1, address.length() - 1);
		}
		int zone = address.indexOf('%');
		if (zone >= 0) {
			address = address.substring(0, zone);
		}
		if (IPV4.matcher(address).matches()) {
			byte[] bytes = new byte[4];
			String[] parts = address.split("\\.");
			for (int i = 0; i < 4; i++) {
				int part = Integer.parseInt(parts[i]);
				if (part > 255) {
					return null;
				}
				bytes[i] = (byte) part;
			}
			return byAddress(bytes);
		}
		if (address.indexOf(':') >= 0 && address.matches("[0-9a-fA-F:][0-9a-fA-F:.]*")) {
			try {
				// starting with a hex digit or a colon, a text with a colon is parsed as
				// an IPv6 literal and never
				// resolved as a host name (InetAddress looks up one that starts
				// otherwise, such as ".1:2")
				return InetAddress.getByName(address);
			}
			catch (UnknownHostException ex) {
				return null;
			}
		}
		return null;
	}

	private static @Nullable InetAddress byAddress(byte[] bytes) {
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

	/**
	 * Returns the network of the given prefix length that holds an address: the address
	 * with every bit after the prefix cleared.
	 * @param address the address
	 * @param prefix the prefix length, from 0 to the address's bit length
	 * @return the network address
	 */
	static InetAddress network(InetAddress address, int prefix) {
		InetAddress network = byAddress(mask(address.getAddress(), prefix));
		return (network != null) ? network : address;
	}

	private static byte[] mask(byte[] bytes, int prefix) {
		byte[] masked = Arrays.copyOf(bytes, bytes.length);
		for (int i = 0; i < masked.length; i++) {
			int bits = Math.max(0, Math.min(8, prefix - i * 8));
			masked[i] &= (byte) (0xFF << (8 - bits));
		}
		return masked;
	}

	/**
	 * Returns whether the range contains an address.
	 * @param address the address
	 * @return whether it lies in the range (an IPv4 address never lies in an IPv6 range,
	 * nor the reverse)
	 */
	public boolean contains(InetAddress address) {
		byte[] bytes = address.getAddress();
		return bytes.length == this.network.length && Arrays.equals(mask(bytes, this.prefixLength), this.network);
	}

	@Override
	public String toString() {
		return this.text;
	}

}
