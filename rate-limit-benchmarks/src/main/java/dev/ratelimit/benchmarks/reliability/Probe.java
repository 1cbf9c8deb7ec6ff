package dev.ratelimit.benchmarks.reliability;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * A client that times each of its requests, for what wrk cannot tell: the latency of the
 * requests sent during an outage, and which client each answer belongs to. It is
 * open-loop: a request is due every {@code 1/rate} seconds whether or not the earlier
 * ones were answered, and is sent by one of {@value #WORKERS} workers.
 */
final class Probe implements AutoCloseable {

	/**
	 * The status of a request that failed without an answer (connection refused or
	 * reset).
	 */
	static final int FAILED = -1;

	/** The status of a request without an answer within the probe's timeout. */
	static final int TIMED_OUT = -2;

	// Each worker has a keep-alive connection of its own to each instance (plain HTTP/1.1
	// over a socket: nothing
	// between the probe and the app but the kernel). A request's latency runs from when
	// it was due until its answer,
	// so it also counts a wait for a free worker when the app holds them all.
	static final int WORKERS = 64;

	private final List<SampleApp> targets;

	private final List<String> clients;

	private final int timeoutMillis;

	private final long periodNanos;

	private final BlockingQueue<Due> due = new LinkedBlockingQueue<>();

	private final ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final List<Thread> threads = new ArrayList<>();

	private long sent;

	private Probe(List<SampleApp> targets, List<String> clients, Duration timeout, int perSecond) {
		this.targets = List.copyOf(targets);
		this.clients = List.copyOf(clients);
		this.timeoutMillis = (int) timeout.toMillis();
		this.periodNanos = 1_000_000_000L / perSecond;
	}

	/**
	 * Starts probing.
	 * @param perSecond requests per second, over all targets
	 */
	static Probe start(List<SampleApp> targets, List<String> clients, int perSecond, Duration timeout) {
		Probe probe = new Probe(targets, clients, timeout, perSecond);
		probe.thread("probe-schedule", probe::schedule);
		for (int i = 0; i < WORKERS; i++) {
			probe.thread("probe-" + i, probe::work);
		}
		return probe;
	}

	private void thread(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		thread.start();
		this.threads.add(thread);
	}

	private void schedule() {
		long next = System.nanoTime();
		while (this.running.get()) {
			long now = System.nanoTime();
			if (now < next) {
				LockSupport.parkNanos(next - now);
				continue;
			}
			long n = this.sent++;
			// from when it is handed to the workers: a late schedule thread (a busy
			// machine) is the probe's delay,
			// not the app's
			this.due.add(new Due(this.targets.get((int) (n % this.targets.size())),
					this.clients.get((int) (n % this.clients.size())), System.currentTimeMillis(), System.nanoTime()));
			next += this.periodNanos;
			if (System.nanoTime() - next > 1_000_000_000L) {
				// more than a second behind: drop what is missed rather than send it all
				// at once
				next = System.nanoTime();
			}
		}
	}

	private void work() {
		Map<SampleApp, Connection> connections = new HashMap<>();
		try {
			while (this.running.get() || !this.due.isEmpty()) {
				Due request = this.due.poll(100, TimeUnit.MILLISECONDS);
				if (request == null) {
					continue;
				}
				Connection connection = connections.computeIfAbsent(request.target, (target) -> new Connection());
				int[] answer = connection.send(request.target.port(), request.client, this.timeoutMillis);
				this.samples.add(new Sample(request.client, request.dueMillis, request.dueNanos,
						System.nanoTime() - request.dueNanos, answer[0], answer[1] == 1));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			connections.values().forEach(Connection::close);
		}
	}

	/**
	 * Stops scheduling, waits for the requests still due or under way (at most the
	 * timeout and a second), and returns every request's sample.
	 */
	List<Sample> stop() {
		this.running.set(false);
		long deadline = System.currentTimeMillis() + this.timeoutMillis + 1000;
		for (Thread thread : this.threads) {
			try {
				thread.join(Math.max(1, deadline - System.currentTimeMillis()));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
		return List.copyOf(this.samples);
	}

	@Override
	public void close() {
		this.running.set(false);
	}

	/** A request due: where, for whom, and since when. */
	private record Due(SampleApp target, String client, long dueMillis, long dueNanos) {
	}

	/**
	 * A worker's keep-alive connection to one instance: plain HTTP/1.1, reopened after
	 * any failure.
	 */
	static final class Connection {

		private Socket socket;

		private InputStream in;

		/**
		 * Sends a GET and reads the answer; returns its status (or {@link #FAILED},
		 * {@link #TIMED_OUT}) and whether it carried {@code Retry-After} (1) or not (0).
		 */
		int[] send(int port, String client, int timeoutMillis) {
			try {
				if (this.socket == null) {
					this.socket = new Socket();
					this.socket.connect(new InetSocketAddress("127.0.0.1", port), timeoutMillis);
					this.socket.setTcpNoDelay(true);
					this.in = new BufferedInputStream(this.socket.getInputStream());
				}
				this.socket.setSoTimeout(timeoutMillis);
				OutputStream out = this.socket.getOutputStream();
				out.write(("GET " + SampleApp.PATH + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n"
						+ SampleApp.CLIENT_HEADER + ": " + client + "\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
				out.flush();
				return read();
			}
			catch (SocketTimeoutException ex) {
				close();
				return new int[] { TIMED_OUT, 0 };
			}
			catch (IOException ex) {
				close();
				return new int[] { FAILED, 0 };
			}
		}

		private int[] read() throws IOException {
			String statusLine = line();
			int status = Integer.parseInt(statusLine.split(" ")[1]);
			long length = 0;
			boolean chunked = false;
			boolean retryAfter = false;
			boolean closing = false;
			for (String header = line(); !header.isEmpty(); header = line()) {
				String name = header.substring(0, Math.max(0, header.indexOf(':'))).strip().toLowerCase(Locale.ROOT);
				String value = header.substring(header.indexOf(':') + 1).strip();
				switch (name) {
					case "content-length" -> length = Long.parseLong(value);
					case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
					case "retry-after" -> retryAfter = true;
					case "connection" -> closing = value.equalsIgnoreCase("close");
					default -> {
					}
				}
			}
			if (chunked) {
				for (long size = Long.parseLong(line().split(";")[0].strip(), 16); size > 0; size = Long
					.parseLong(line().split(";")[0].strip(), 16)) {
					skip(size);
					line();
				}
				line();
			}
			else {
				skip(length);
			}
			if (closing) {
				close();
			}
			return new int[] { status, retryAfter ? 1 : 0 };
		}

		private String line() throws IOException {
			ByteArrayOutputStream line = new ByteArrayOutputStream();
			int c;
			while ((c = this.in.read()) != '\n') {
				if (c == -1) {
					throw new IOException("connection closed");
				}
				if (c != '\r') {
					line.write(c);
				}
			}
			return line.toString(StandardCharsets.ISO_8859_1);
		}

		private void skip(long bytes) throws IOException {
			long left = bytes;
			while (left > 0) {
				long skipped = this.in.skip(left);
				if (skipped <= 0) {
					if (this.in.read() == -1) {
						throw new IOException("connection closed");
					}
					skipped = 1;
				}
				left -= skipped;
			}
		}

		void close() {
			if (this.socket != null) {
				try {
					this.socket.close();
				}
				catch (IOException ex) {
					// closing
				}
			}
			this.socket = null;
			this.in = null;
		}

	}

	/**
	 * One request.
	 *
	 * @param client the client it named
	 * @param startedMillis when it was due (epoch ms)
	 * @param startedNanos when it was due ({@link System#nanoTime()})
	 * @param latencyNanos how long until its answer or failure
	 * @param status its status, or {@link #FAILED} or {@link #TIMED_OUT}
	 * @param retryAfter whether the answer carried {@code Retry-After}
	 */
	record Sample(String client, long startedMillis, long startedNanos, long latencyNanos, int status,
			boolean retryAfter) {

		double latencyMillis() {
			return this.latencyNanos / 1e6;
		}

		boolean admitted() {
			return this.status >= 200 && this.status < 300;
		}

		/**
		 * Whether it failed without an answer: refused, reset, or unanswered within the
		 * timeout.
		 */
		boolean socketError() {
			return this.status == FAILED || this.status == TIMED_OUT;
		}

		/**
		 * Whether it is a 5xx other than the deny mode's 503 with {@code Retry-After}.
		 */
		boolean unplanned5xx() {
			return this.status >= 500 && !(this.status == 503 && this.retryAfter);
		}

	}

}
