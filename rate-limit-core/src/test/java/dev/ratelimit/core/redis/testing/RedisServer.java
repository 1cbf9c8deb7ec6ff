package dev.ratelimit.core.redis.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;

import static org.awaitility.Awaitility.await;

/**
 * A {@code redis-server} process owned by a test: started on a free port (never 6379)
 * with nothing written to disk ({@code --save "" --appendonly no}, its own temporary
 * {@code --dir}), killed with {@link #stop()}, and started again on the same port with
 * {@link #restart()}. Every server still running when the JVM exits is killed by a
 * shutdown hook, and its directory deleted. A server can also start from a config file of
 * its own ({@link #startWithConfig}), which it may rewrite, as a Sentinel does.
 */
public final class RedisServer implements AutoCloseable {

	private static final Set<RedisServer> RUNNING = ConcurrentHashMap.newKeySet();

	static {
		Runtime.getRuntime()
			.addShutdownHook(new Thread(() -> RUNNING.forEach(RedisServer::close), "redis-test-cleanup"));
	}

	private final int port;

	private final Path directory;

	private final List<String> extraArguments;

	/** The text of the config file the server starts from, or {@code null} for none. */
	private final @Nullable String config;

	private @Nullable Process process;

	private RedisServer(int port, @Nullable String config, List<String> extraArguments) {
		this.port = port;
		this.config = config;
		this.extraArguments = List.copyOf(extraArguments);
		try {
			this.directory = Files.createTempDirectory("ratelimit-redis-" + port + "-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Starts a server on a free port.
	 * @param extraArguments more {@code redis-server} arguments, such as
	 * {@code --cluster-enabled yes}
	 * @return the running server
	 */
	public static RedisServer start(String... extraArguments) {
		RedisServer server = new RedisServer(freePort(), null, List.of(extraArguments));
		server.launch();
		return server;
	}

	/**
	 * Starts a server on a free port from a config file with the given text, written to
	 * the server's directory on the first start only: a Sentinel rewrites its file, and a
	 * restart keeps what it wrote.
	 * @param config the config file's text, such as {@code sentinel monitor ...} lines
	 * @param extraArguments more {@code redis-server} arguments, such as
	 * {@code --sentinel}
	 * @return the running server
	 */
	public static RedisServer startWithConfig(String config, String... extraArguments) {
		RedisServer server = new RedisServer(freePort(), config, List.of(extraArguments));
		server.launch();
		return server;
	}

	/**
	 * Returns a free local port; never 6379.
	 * @return the port
	 */
	public static int freePort() {
		for (int attempt = 0; attempt < 10; attempt++) {
			try (ServerSocket socket = new ServerSocket(0)) {
				socket.setReuseAddress(true);
				int port = socket.getLocalPort();
				if (port != 6379 && port < 55536) {
					return port;
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		throw new IllegalStateException("No free port below 55536");
	}

	private synchronized void launch() {
		if (this.process != null && this.process.isAlive()) {
			return;
		}
		List<String> command = new ArrayList<>(List.of(RedisExecutable.locate().toString()));
		try {
			if (this.config != null) {
				// the config file must be the first argument
				Path file = this.directory.resolve("redis.conf");
				if (!Files.exists(file)) {
					Files.writeString(file, this.config);
				}
				command.add(file.toString());
			}
		}
		catch (IOException ex) {
			close();
			throw new UncheckedIOException("Cannot write the config file of " + this, ex);
		}
		command.addAll(List.of("--port", Integer.toString(this.port), "--bind", "127.0.0.1", "--save", "",
				"--appendonly", "no", "--dir", this.directory.toString(), "--protected-mode", "no"));
		command.addAll(this.extraArguments);
		try {
			File log = this.directory.resolve("redis.log").toFile();
			this.process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(log))
				.start();
		}
		catch (IOException ex) {
			close();
			throw new UncheckedIOException("Cannot start " + command, ex);
		}
		RUNNING.add(this);
		try {
			awaitReady(Duration.ofSeconds(10));
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	private void awaitReady(Duration timeout) {
		AtomicReference<@Nullable RuntimeException> last = new AtomicReference<>();
		try {
			await().atMost(timeout).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20)).until(() -> {
				Process running = this.process;
				if (running == null || !running.isAlive()) {
					throw new IllegalStateException("redis-server on port " + this.port + " exited; see " + log());
				}
				try (RespClient client = new RespClient("127.0.0.1", this.port, 1000)) {
					return "PONG".equals(client.command("PING"));
				}
				catch (RuntimeException ex) {
					last.set(ex);
					return false;
				}
			});
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException(
					"redis-server on port " + this.port + " did not answer within " + timeout + "; see " + log(),
					last.get());
		}
	}

	private String log() {
		Path log = this.directory.resolve("redis.log");
		try {
			return log + ":\n" + Files.readString(log);
		}
		catch (IOException ex) {
			return log.toString();
		}
	}

	/**
	 * Returns the port.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns the endpoint of this server.
	 * @return the endpoint
	 */
	public RedisEndpoint endpoint() {
		return new RedisEndpoint("127.0.0.1", this.port, null, 0);
	}

	/**
	 * Returns the process id of the running server, so that a supervisor outside this JVM
	 * can stop it.
	 * @return the pid, or {@code -1} when it does not run
	 */
	public synchronized long pid() {
		Process running = this.process;
		return (running != null && running.isAlive()) ? running.pid() : -1;
	}

	/**
	 * Returns whether the process runs.
	 * @return whether it runs
	 */
	public synchronized boolean isRunning() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * Stops the process where it stands (SIGSTOP), as a hung server or a long pause of
	 * its host: connections stay open and nothing is answered until {@link #resume()}.
	 */
	public synchronized void pause() {
		signal("STOP");
	}

	/**
	 * Lets a paused process go on (SIGCONT); it answers what it was sent meanwhile.
	 */
	public synchronized void resume() {
		signal("CONT");
	}

	private void signal(String signal) {
		long pid = pid();
		if (pid < 0) {
			throw new IllegalStateException(this + " does not run");
		}
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true)
				.start();
			if (kill.waitFor() != 0) {
				throw new IllegalStateException(
						"kill -" + signal + " " + pid + " failed: " + new String(kill.getInputStream().readAllBytes()));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while signalling " + this, ex);
		}
	}

	/**
	 * Kills the process (SIGKILL, as a crash), keeping the port and directory for
	 * {@link #restart()}.
	 */
	public synchronized void stop() {
		kill();
	}

	/**
	 * Starts the process again on the same port, with empty state (nothing was saved).
	 */
	public synchronized void restart() {
		kill();
		launch();
	}

	private synchronized void kill() {
		Process running = this.process;
		if (running != null) {
			running.destroyForcibly();
			try {
				running.waitFor();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.process = null;
		}
		RUNNING.remove(this);
	}

	/**
	 * Kills the process and deletes its directory.
	 */
	@Override
	public synchronized void close() {
		kill();
		try (Stream<Path> files = Files.walk(this.directory)) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
		catch (IOException ex) {
			// best effort
		}
	}

	@Override
	public String toString() {
		return "redis-server:" + this.port;
	}

}
