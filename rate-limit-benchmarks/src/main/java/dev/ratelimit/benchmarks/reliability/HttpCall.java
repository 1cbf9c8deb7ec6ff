package dev.ratelimit.benchmarks.reliability;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One HTTP request of the application-integration scenario: method, path, headers and
 * body, and whether it goes to the management port. Immutable: each {@code with} method
 * returns a new call.
 *
 * @param method the method, such as {@code POST}
 * @param path the path with its query, such as {@code /api/reverse?lat=34&lon=-6}
 * @param headers the headers, in order
 * @param body the body, empty for none
 * @param management whether the call goes to the management port (the application's port
 * when there is none)
 */
record HttpCall(String method, String path, Map<String, String> headers, String body, boolean management) {

	HttpCall {
		headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
	}

	static HttpCall get(String path) {
		return new HttpCall("GET", path, Map.of(), "", false);
	}

	static HttpCall post(String path, String contentType, String body) {
		return new HttpCall("POST", path, Map.of("Content-Type", contentType), body, false);
	}

	HttpCall header(String name, String value) {
		Map<String, String> all = new LinkedHashMap<>(this.headers);
		all.put(name, value);
		return new HttpCall(this.method, this.path, all, this.body, this.management);
	}

	/**
	 * As if sent through a proxy that the application trusts, for this client address.
	 */
	HttpCall forwardedFor(String addresses) {
		return header("X-Forwarded-For", addresses);
	}

	HttpCall basic(String user, String password) {
		return header("Authorization", "Basic "
				+ Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
	}

	HttpCall toManagementPort() {
		return new HttpCall(this.method, this.path, this.headers, this.body, true);
	}

	/** The request as bytes on the wire, on a connection closed after its answer. */
	byte[] wire(int port) {
		byte[] content = this.body.getBytes(StandardCharsets.UTF_8);
		StringBuilder request = new StringBuilder();
		request.append(this.method).append(' ').append(this.path).append(" HTTP/1.1\r\n");
		request.append("Host: 127.0.0.1:").append(port).append("\r\n");
		this.headers.forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
		if (content.length > 0 || this.method.equals("POST")) {
			request.append("Content-Length: ").append(content.length).append("\r\n");
		}
		request.append("Connection: close\r\n\r\n");
		byte[] head = request.toString().getBytes(StandardCharsets.ISO_8859_1);
		byte[] wire = new byte[head.length + content.length];
		System.arraycopy(head, 0, wire, 0, head.length);
		System.arraycopy(content, 0, wire, head.length, content.length);
		return wire;
	}

}
