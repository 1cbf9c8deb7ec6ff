package dev.ratelimit.core.redis.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A minimal blocking RESP2 client for the test harness: setting up clusters, reading
 * {@code INFO}, checking keys. It depends on no Redis client library, so that it observes
 * Redis independently of the code under test.
 */
public final class RespClient implements Closeable {

	private final Socket socket;

	private final InputStream in;

	private final OutputStream out;

	/**
	 * Connects.
	 * @param host the host
	 * @param port the port
	 * @param timeoutMillis connect and read timeout
	 */
	public RespClient(String host, int port, int timeoutMillis) {
		try {
			this.socket = new Socket();
			this.socket.connect(new InetSocketAddress(host, port), timeoutMillis);
			this.socket.setSoTimeout(timeoutMillis);
			this.in = new BufferedInputStream(this.socket.getInputStream());
			this.out = this.socket.getOutputStream();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot connect to Redis at " + host + ":" + port, ex);
		}
	}

	/**
	 * Connects to an endpoint, authenticating and selecting its database if it names
	 * them.
	 * @param endpoint the endpoint
	 * @return the client
	 */
	public static RespClient connect(RedisEndpoint endpoint) {
		RespClient client = new RespClient(endpoint.host(), endpoint.port(), 5000);
		if (endpoint.password() != null) {
			client.command("AUTH", endpoint.password());
		}
		if (endpoint.database() != 0) {
			client.command("SELECT", Integer.toString(endpoint.database()));
		}
		return client;
	}

	/**
	 * Sends a command and returns its reply: a {@code String}, {@code Long}, {@code List}
	 * or {@code null}.
	 * @param args the command and its arguments
	 * @return the reply
	 * @throws IllegalStateException for an error reply
	 */
	public @Nullable Object command(String... args) {
		try {
			ByteArrayOutputStream request = new ByteArrayOutputStream();
			request.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
			for (String arg : args) {
				byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
				request.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
				request.write(bytes);
				request.write("\r\n".getBytes(StandardCharsets.UTF_8));
			}
			this.out.write(request.toByteArray());
			this.out.flush();
			return read();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis command " + args[0] + " failed", ex);
		}
	}

	/**
	 * Sends a command whose reply is text.
	 * @param args the command
	 * @return the text
	 */
	public String text(String... args) {
		return String.valueOf(command(args));
	}

	/**
	 * Sends a command whose reply is an integer.
	 * @param args the command
	 * @return the integer
	 */
	public long number(String... args) {
		return (Long) command(args);
	}

	private @Nullable Object read() throws IOException {
		int type = this.in.read();
		String line = line();
		return switch (type) {
			case '+' -> line;
			case '-' -> throw new IllegalStateException(line);
			case ':' -> Long.parseLong(line);
			case '$' -> {
				int length = Integer.parseInt(line);
				if (length < 0) {
					yield null;
				}
				byte[] data = this.in.readNBytes(length);
				line();
				yield new String(data, StandardCharsets.UTF_8);
			}
			case '*' -> {
				int count = Integer.parseInt(line);
				if (count < 0) {
					yield null;
				}
				List<@Nullable Object> items = new ArrayList<>(count);
				for (int i = 0; i < count; i++) {
					items.add(read());
				}
				yield items;
			}
			case -1 -> throw new EOFException("Redis closed the connection");
			default -> throw new IOException("Unexpected RESP type '" + (char) type + "'");
		};
	}

	private String line() throws IOException {
		StringBuilder line = new StringBuilder();
		int c;
		while ((c = this.in.read()) != '\r') {
			if (c == -1) {
				throw new EOFException("Redis closed the connection");
			}
			line.append((char) c);
		}
		this.in.read();
		return line.toString();
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// closing
		}
	}

}
