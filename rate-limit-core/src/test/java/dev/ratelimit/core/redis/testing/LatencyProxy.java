package dev.ratelimit.core.redis.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * A TCP proxy in front of a server (a test Redis) that can make it slow, hung or gone
 * while its clients stay connected to the proxy's port:
 * <ul>
 * <li>{@link #latency(Duration)}: every reply read from the server from then on reaches
 * the client that much later (in order);</li>
 * <li>{@link #blackHole()}: connections are accepted and read, but nothing reaches the
 * server and nothing comes back, as from a hung server;</li>
 * <li>{@link #refuse()}: every connection is closed and new ones are refused, as for a
 * server that is gone;</li>
 * <li>{@link #forward()}: back to forwarding. Connections that were black-holed are
 * closed first, since requests were lost and their replies would no longer match.</li>
 * </ul>
 * Each connection has its own threads: one forwards requests, one reads replies and one
 * writes them when due.
 */
public final class LatencyProxy implements AutoCloseable {

	private static final int BUFFER = 16 * 1024;

	private final String targetHost;

	private final int targetPort;

	private final int port;

	private final Set<Link> links = ConcurrentHashMap.newKeySet();

	private volatile long latencyNanos;

	private volatile boolean blackHoled;

	private @Nullable ServerSocket listener;

	private @Nullable Thread acceptor;

	/**
	 * While refusing: a socket bound to the port but not listening, so that connecting is
	 * refused and no other socket, in this process or another, takes the port meanwhile.
	 */
	private @Nullable Socket placeholder;

	private boolean closed;

	private LatencyProxy(String targetHost, int targetPort, int port) {
		this.targetHost = targetHost;
		this.targetPort = targetPort;
		this.port = port;
	}

	/**
	 * Starts a proxy on a free local port that forwards to a server, with no latency.
	 * @param targetHost the server's host
	 * @param targetPort the server's port
	 * @return the proxy, accepting connections
	 */
	public static LatencyProxy start(String targetHost, int targetPort) {
		LatencyProxy proxy = new LatencyProxy(targetHost, targetPort, RedisServer.freePort());
		proxy.listen();
		return proxy;
	}

	/**
	 * Starts a proxy on a free local port that forwards to a test Redis.
	 * @param target the Redis
	 * @return the proxy, accepting connections
	 */
	public static LatencyProxy start(RedisEndpoint target) {
		return start(target.host(), target.port());
	}

	private synchronized void listen() {
		if (this.listener != null || this.closed) {
			return;
		}
		closeQuietly(this.placeholder);
		this.placeholder = null;
		try {
			ServerSocket socket = new ServerSocket();
			socket.setReuseAddress(true);
			socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 128);
			this.listener = socket;
			Thread acceptor = new Thread(() -> accept(socket), "latency-proxy-" + this.port + "-accept");
			acceptor.setDaemon(true);
			acceptor.start();
			this.acceptor = acceptor;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot listen on port " + this.port, ex);
		}
	}

	private void accept(ServerSocket socket) {
		while (!socket.isClosed()) {
			Socket client;
			try {
				client = socket.accept();
			}
			catch (IOException ex) {
				return;
			}
			Link link = new Link(client);
			this.links.add(link);
			link.start();
		}
	}

	/**
	 * Returns the port clients connect to.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns the address of the proxy as a test Redis endpoint.
	 * @return the endpoint
	 */
	public RedisEndpoint endpoint() {
		return new RedisEndpoint("127.0.0.1", this.port, null, 0);
	}

	/**
	 * Delays every reply read from the server from now on; replies already read keep
	 * their delay, and none overtakes another.
	 * @param latency the delay, zero for none
	 */
	public void latency(Duration latency) {
		if (latency.isNegative()) {
			throw new IllegalArgumentException("latency must not be negative (was " + latency + ")");
		}
		this.latencyNanos = latency.toNanos();
	}

	/**
	 * Stops forwarding in both directions: requests are read and dropped, no reply comes,
	 * new connections are accepted and treated alike. Ends with {@link #forward()}, which
	 * closes these connections.
	 */
	public synchronized void blackHole() {
		this.blackHoled = true;
		this.links.forEach(Link::hole);
	}

	/**
	 * Closes every connection and stops listening, so that connecting fails at once. Ends
	 * with {@link #forward()}.
	 */
	public synchronized void refuse() {
		ServerSocket socket = this.listener;
		this.listener = null;
		closeQuietly(socket);
		awaitAcceptorEnd();
		this.links.forEach(Link::close);
		if (socket != null && !this.closed) {
			this.placeholder = holdPort();
		}
	}

	/**
	 * A socket closed while a thread accepts on it keeps its port until that thread has
	 * left accept.
	 */
	private void awaitAcceptorEnd() {
		Thread thread = this.acceptor;
		this.acceptor = null;
		if (thread != null) {
			try {
				thread.join(Duration.ofSeconds(5).toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private Socket holdPort() {
		// without SO_REUSEADDR no other socket can bind the port, but the bind fails
		// while connections the proxy
		// closed linger in TIME_WAIT; then with it, which still keeps the port from being
		// handed out as a free one
		for (boolean reuse : new boolean[] { false, true }) {
			Socket socket = new Socket();
			try {
				socket.setReuseAddress(reuse);
				socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port));
				return socket;
			}
			catch (IOException ex) {
				closeQuietly(socket);
				if (reuse) {
					throw new UncheckedIOException("Cannot hold port " + this.port + " while refusing", ex);
				}
			}
		}
		throw new IllegalStateException("unreachable");
	}

	/**
	 * Forwards again, with the latency set last: closes the connections of a black hole,
	 * and listens again after {@link #refuse()}.
	 */
	public synchronized void forward() {
		this.blackHoled = false;
		for (Link link : this.links) {
			if (link.holed) {
				link.close();
			}
		}
		listen();
	}

	/**
	 * Returns the number of client connections open through the proxy.
	 * @return the connections
	 */
	public int connections() {
		return this.links.size();
	}

	@Override
	public synchronized void close() {
		this.closed = true;
		refuse();
		closeQuietly(this.placeholder);
		this.placeholder = null;
	}

	private static void closeQuietly(@Nullable AutoCloseable closeable) {
		if (closeable != null) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				// closing
			}
		}
	}

	/**
	 * A reply read from the server, and when it is due at the client
	 * ({@link System#nanoTime()}).
	 */
	private record Chunk(byte[] bytes, long due) {

		static final Chunk END = new Chunk(new byte[0], 0);

	}

	/**
	 * One client connection and, unless it was black-holed from the start, its connection
	 * to the server.
	 */
	private final class Link {

		private final Socket client;

		private @Nullable Socket server;

		private final BlockingQueue<Chunk> replies = new LinkedBlockingQueue<>();

		private volatile boolean holed;

		private volatile boolean open = true;

		/**
		 * When the last queued reply is due, so that a shorter latency set later does not
		 * let a reply overtake it.
		 */
		private long lastDue;

		Link(Socket client) {
			this.client = client;
		}

		void start() {
			this.holed = LatencyProxy.this.blackHoled;
			if (!this.holed) {
				try {
					Socket upstream = new Socket();
					upstream.connect(new InetSocketAddress(LatencyProxy.this.targetHost, LatencyProxy.this.targetPort),
							1000);
					upstream.setTcpNoDelay(true);
					this.client.setTcpNoDelay(true);
					this.server = upstream;
				}
				catch (IOException ex) {
					// the server is down: so is this connection
					close();
					return;
				}
			}
			thread("requests", this::forwardRequests);
			if (this.server != null) {
				thread("replies", this::readReplies);
				thread("delivery", this::deliverReplies);
			}
		}

		private void thread(String name, Runnable task) {
			Thread thread = new Thread(task, "latency-proxy-" + LatencyProxy.this.port + "-" + name);
			thread.setDaemon(true);
			thread.start();
		}

		void hole() {
			this.holed = true;
		}

		private void forwardRequests() {
			byte[] buffer = new byte[BUFFER];
			try (InputStream in = this.client.getInputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					Socket upstream = this.server;
					if (!this.holed && upstream != null) {
						OutputStream out = upstream.getOutputStream();
						out.write(buffer, 0, read);
						out.flush();
					}
				}
			}
			catch (IOException ex) {
				// either side closed
			}
			close();
		}

		private void readReplies() {
			byte[] buffer = new byte[BUFFER];
			Socket upstream = this.server;
			try (InputStream in = (upstream != null) ? upstream.getInputStream() : InputStream.nullInputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					if (!this.holed) {
						long due = Math.max(System.nanoTime() + LatencyProxy.this.latencyNanos, this.lastDue);
						this.lastDue = due;
						this.replies.add(new Chunk(Arrays.copyOf(buffer, read), due));
					}
				}
			}
			catch (IOException ex) {
				// either side closed
			}
			close();
		}

		private void deliverReplies() {
			try {
				OutputStream out = this.client.getOutputStream();
				while (this.open) {
					Chunk chunk = this.replies.take();
					if (chunk == Chunk.END) {
						return;
					}
					for (long wait = chunk.due - System.nanoTime(); wait > 0
							&& this.open; wait = chunk.due - System.nanoTime()) {
						LockSupport.parkNanos(wait);
					}
					out.write(chunk.bytes);
					out.flush();
				}
			}
			catch (IOException ex) {
				close();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		void close() {
			this.open = false;
			closeQuietly(this.client);
			closeQuietly(this.server);
			this.replies.add(Chunk.END);
			LatencyProxy.this.links.remove(this);
		}

	}

}
