package dev.ratelimit.benchmarks.reliability;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * An application of this repository (the sample or the reactive example) started from a
 * jar, as built at some commit, with the properties and environment of one case of the
 * application-integration scenario. Unlike {@link SampleApp} it sets nothing of its own
 * but the ports, so that both versions of an application get the same command line, and
 * it may fail to start: that is a figure too. Its requests go over plain HTTP/1.1
 * sockets, one connection each.
 */
final class IntegrationApp implements AutoCloseable {

	private static final Duration START_TIMEOUT = Duration.ofSeconds(180);

	private static final int TIMEOUT_MILLIS = 15_000;

	/** A line that Spring Boot's console log writes at level WARN. */
	private static final Pattern WARN_LINE = Pattern.compile("^\\S+\\s+WARN\\s");

	private static final Pattern ERROR_LINE = Pattern.compile("^\\S+\\s+ERROR\\s");

	private final String name;

	private final Process process;

	private final int port;

	private final int managementPort;

	private final Path log;

	/** The lines its log file held before it was launched (a log is appended to). */
	private final int firstLine;

	private boolean started;

	private double startSeconds;

	private IntegrationApp(String name, Process process, int port, int managementPort, Path log, int firstLine) {
		this.name = name;
		this.process = process;
		this.port = port;
		this.managementPort = managementPort;
		this.log = log;
		this.firstLine = firstLine;
	}

	static Builder builder(Path jar, String name) {
		return new Builder(jar, name);
	}

	String name() {
		return this.name;
	}

	/** Whether it answered HTTP; {@code false} if it exited at start-up. */
	boolean started() {
		return this.started;
	}

	/** From its launch until it answered, or until it exited. */
	double startSeconds() {
		return this.startSeconds;
	}

	/** The exit code of a process that ended, or -1 while it runs. */
	int exitCode() {
		return this.process.isAlive() ? -1 : this.process.exitValue();
	}

	/** The CPU time the process has used, in ms, as the operating system counts it. */
	long cpuMillis() {
		return this.process.toHandle().info().totalCpuDuration().map(Duration::toMillis).orElse(-1L);
	}

	/** The lines of its log so far, since it was launched. */
	List<String> logLines() {
		List<String> lines = lines(this.log);
		return lines.subList(Math.min(this.firstLine, lines.size()), lines.size());
	}

	private static List<String> lines(Path log) {
		if (!Files.exists(log)) {
			return List.of();
		}
		try {
			// a line being written may end in a partial character
			return List.of(new String(Files.readAllBytes(log), StandardCharsets.UTF_8).split("\n"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** How many lines of its log, from line {@code from} on, contain some text. */
	long logLinesContaining(int from, String text) {
		List<String> lines = logLines();
		return lines.subList(Math.min(from, lines.size()), lines.size())
			.stream()
			.filter((line) -> line.contains(text))
			.count();
	}

	long warnLines() {
		return countLines(WARN_LINE.asPredicate());
	}

	long errorLines() {
		return countLines(ERROR_LINE.asPredicate());
	}

	private long countLines(Predicate<String> predicate) {
		return logLines().stream().filter(predicate).count();
	}

	/**
	 * What Spring Boot's report of a failed start says first: the first two lines after
	 * its "Description:", if any.
	 */
	String failureDescription() {
		List<String> lines = logLines();
		int description = lines.stream().map(String::strip).toList().indexOf("Description:");
		if (description < 0) {
			return "";
		}
		return lines.subList(description + 1, lines.size())
			.stream()
			.map(String::strip)
			.filter((line) -> !line.isEmpty())
			.limit(2)
			.collect(Collectors.joining(" "));
	}

	/**
	 * Sends one request and returns its answer.
	 * @throws IllegalStateException if no answer comes
	 */
	Answer send(HttpCall call) {
		int target = call.management() ? this.managementPort : this.port;
		try (Socket socket = connect(target)) {
			socket.getOutputStream().write(call.wire(target));
			socket.getOutputStream().flush();
			return Answer.read(socket.getInputStream());
		}
		catch (IOException ex) {
			throw new IllegalStateException(call.method() + " " + call.path() + " to " + this + " failed: " + ex, ex);
		}
	}

	int status(HttpCall call) {
		return send(call).status();
	}

	/**
	 * Sends requests together: each on a connection opened beforehand, all written at
	 * once by threads of their own, as a client that wants them in flight together would.
	 * @return the statuses, in the order of the calls ({@code -1} for no answer)
	 */
	List<Integer> burst(int count, IntFunction<HttpCall> calls) {
		ExecutorService threads = Executors.newFixedThreadPool(count);
		List<Socket> sockets = new ArrayList<>();
		try {
			CountDownLatch go = new CountDownLatch(1);
			List<Future<Integer>> answers = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				HttpCall call = calls.apply(i);
				int target = call.management() ? this.managementPort : this.port;
				Socket socket = connect(target);
				sockets.add(socket);
				byte[] wire = call.wire(target);
				answers.add(threads.submit(() -> {
					go.await();
					socket.getOutputStream().write(wire);
					socket.getOutputStream().flush();
					return Answer.read(socket.getInputStream()).status();
				}));
			}
			// every thread waits at the latch before any request leaves
			Pause.millis(200);
			go.countDown();
			List<Integer> statuses = new ArrayList<>();
			for (Future<Integer> answer : answers) {
				try {
					statuses.add(answer.get());
				}
				catch (Exception ex) {
					statuses.add(-1);
				}
			}
			return statuses;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		finally {
			threads.shutdownNow();
			for (Socket socket : sockets) {
				try {
					socket.close();
				}
				catch (IOException ex) {
					// closed already
				}
			}
		}
	}

	private static Socket connect(int port) throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress("127.0.0.1", port), TIMEOUT_MILLIS);
		socket.setSoTimeout(TIMEOUT_MILLIS);
		socket.setTcpNoDelay(true);
		return socket;
	}

	@Override
	public void close() {
		Processes.stop(this.process);
	}

	@Override
	public String toString() {
		return this.name + " on port " + this.port;
	}

	/**
	 * An answer: its status and body.
	 *
	 * @param status the status code
	 * @param body the body, as text
	 */
	record Answer(int status, String body) {

		/** Reads a whole answer of a connection that closes after it. */
		static Answer read(InputStream in) throws IOException {
			ByteArrayOutputStream all = new ByteArrayOutputStream();
			in.transferTo(all);
			String text = all.toString(StandardCharsets.ISO_8859_1);
			int lineEnd = text.indexOf("\r\n");
			if (!text.startsWith("HTTP/1.1 ") || lineEnd < 0) {
				throw new IOException("not an HTTP answer: '" + text.substring(0, Math.min(80, text.length())) + "'");
			}
			int status = Integer.parseInt(text.substring(9, 12));
			int headEnd = text.indexOf("\r\n\r\n");
			String body = (headEnd < 0) ? "" : text.substring(headEnd + 4);
			return new Answer(status, new String(body.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
		}

	}

	/**
	 * The command line and environment of an instance.
	 */
	static final class Builder {

		private final Path jar;

		private final String name;

		private final Map<String, String> properties = new LinkedHashMap<>();

		private final Map<String, String> environment = new LinkedHashMap<>();

		private boolean managementPort;

		private Builder(Path jar, String name) {
			this.jar = jar;
			this.name = name;
		}

		Builder property(String key, String value) {
			this.properties.put(key, value);
			return this;
		}

		/** Properties given as alternating keys and values. */
		Builder properties(String... keysAndValues) {
			for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
				property(keysAndValues[i], keysAndValues[i + 1]);
			}
			return this;
		}

		Builder environment(String name, String value) {
			this.environment.put(name, value);
			return this;
		}

		/** {@code management.server.port}: the actuator on a free port of its own. */
		Builder managementPort() {
			this.managementPort = true;
			return this;
		}

		/** The {@code redis} profile, on a Redis of the harness. */
		Builder redis(RedisServer server) {
			return properties("spring.profiles.active", "redis", "spring.data.redis.host", "127.0.0.1",
					"spring.data.redis.port", Integer.toString(server.port()));
		}

		/**
		 * Starts the instance and returns once it answers HTTP, or once it has exited
		 * ({@link #started()} tells which).
		 * @throws IllegalStateException if it does neither within three minutes
		 */
		IntegrationApp start(Processes processes) {
			int port = RedisServer.freePort();
			int management = this.managementPort ? RedisServer.freePort() : port;
			List<String> command = new ArrayList<>(
					List.of("java", "-Xms128m", "-Xmx384m", "-jar", this.jar.toString(), "--server.port=" + port));
			if (this.managementPort) {
				command.add("--management.server.port=" + management);
			}
			this.properties.forEach((key, value) -> command.add("--" + key + "=" + value));
			Path log = processes.logDirectory().resolve("app-" + this.name + ".log");
			int firstLine = lines(log).size();
			long launched = System.nanoTime();
			Process process = processes.start("app-" + this.name, command, this.environment);
			IntegrationApp app = new IntegrationApp(this.name, process, port, management, log, firstLine);
			long deadline = launched + START_TIMEOUT.toNanos();
			while (System.nanoTime() < deadline) {
				if (!process.isAlive()) {
					app.startSeconds = Clock.millisBetween(launched, System.nanoTime()) / 1000;
					return app;
				}
				try {
					// any answer of the actuator's health, whatever its status, means the
					// server is up
					app.send(HttpCall.get("/actuator/health").toManagementPort());
					app.started = true;
					app.startSeconds = Clock.millisBetween(launched, System.nanoTime()) / 1000;
					return app;
				}
				catch (IllegalStateException ex) {
					Pause.millis(100);
				}
			}
			app.close();
			throw new IllegalStateException(app + " neither answered nor exited within " + START_TIMEOUT);
		}

	}

}
