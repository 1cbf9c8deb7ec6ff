package dev.ratelimit.benchmarks.reliability;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * Everything a scenario starts: processes (the sample app, wrk, jcmd) and harness servers
 * (Redis, Sentinel, cluster, proxy). All are stopped when the scenario ends, and by a
 * shutdown hook on Ctrl-C or {@code SIGTERM}. Every process id is also appended to a pid
 * file, from which {@code reliability.sh} stops what is left should this JVM itself be
 * killed outright.
 */
final class Processes implements AutoCloseable {

	private static final long STOP_SECONDS = 15;

	private final Path pidFile;

	private final Path logDirectory;

	private final Deque<AutoCloseable> owned = new ArrayDeque<>();

	private final Thread hook = new Thread(this::close, "reliability-cleanup");

	Processes(Path pidFile, Path logDirectory) {
		this.pidFile = pidFile;
		this.logDirectory = logDirectory;
		try {
			Files.createDirectories(logDirectory);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		Runtime.getRuntime().addShutdownHook(this.hook);
	}

	Path logDirectory() {
		return this.logDirectory;
	}

	/**
	 * Starts a process whose output goes to {@code <name>.log} in the log directory.
	 */
	Process start(String name, List<String> command) {
		return start(name, command, Map.of());
	}

	/**
	 * Starts a process with more environment variables, its output going to
	 * {@code <name>.log}.
	 */
	Process start(String name, List<String> command, Map<String, String> environment) {
		File log = this.logDirectory.resolve(name + ".log").toFile();
		try {
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(log));
			builder.environment().putAll(environment);
			Process process = builder.start();
			record(process.pid());
			synchronized (this.owned) {
				this.owned.push(() -> stop(process));
			}
			return process;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot start " + command, ex);
		}
	}

	/**
	 * Runs a short command to its end and returns its output.
	 * @throws IllegalStateException if it fails or takes longer than the timeout
	 */
	String run(List<String> command, long timeoutSeconds) {
		Path output = null;
		try {
			// to a file, not a pipe: reading a pipe would wait for a command that hangs
			output = Files.createTempFile(this.logDirectory, "run-", ".out");
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(output.toFile())
				.start();
			record(process.pid());
			if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				throw new IllegalStateException(command + " took longer than " + timeoutSeconds + " s");
			}
			String text = Files.readString(output);
			if (process.exitValue() != 0) {
				throw new IllegalStateException(command + " exited with " + process.exitValue() + ": " + text.strip());
			}
			return text;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run " + command, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted running " + command, ex);
		}
		finally {
			if (output != null) {
				output.toFile().delete();
			}
		}
	}

	/**
	 * Takes a harness resource (a server, a cluster, a proxy) to close when the scenario
	 * ends.
	 */
	<T extends AutoCloseable> T own(T resource) {
		synchronized (this.owned) {
			this.owned.push(resource);
		}
		return resource;
	}

	/**
	 * Starts a Redis server of the harness (no persistence, a free port), owned and
	 * recorded.
	 */
	RedisServer redis(String... arguments) {
		return recorded(own(RedisServer.start(arguments)));
	}

	/**
	 * Kills a Redis server (SIGKILL, as a crash) and starts it again on its port, empty;
	 * returns once it answers PING.
	 */
	void restart(RedisServer server) {
		server.restart();
		recorded(server);
	}

	/**
	 * Records the pid of each running server.
	 */
	RedisServer recorded(RedisServer server) {
		record(server.pid());
		return server;
	}

	private void record(long pid) {
		if (pid <= 0) {
			return;
		}
		try {
			Files.writeString(this.pidFile, pid + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Sends a signal such as {@code INT} to a process (wrk prints its results on
	 * {@code SIGINT}).
	 */
	void signal(Process process, String signal) {
		if (process.isAlive()) {
			run(List.of("kill", "-" + signal, Long.toString(process.pid())), 10);
		}
	}

	/**
	 * Stops a process: {@code SIGTERM}, then {@code SIGKILL} if it has not ended within
	 * 15 s.
	 */
	static void stop(Process process) {
		if (!process.isAlive()) {
			return;
		}
		process.destroy();
		try {
			if (!process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				process.waitFor(STOP_SECONDS, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		while (true) {
			AutoCloseable next;
			synchronized (this.owned) {
				next = this.owned.poll();
			}
			if (next == null) {
				break;
			}
			try {
				next.close();
			}
			catch (Exception ex) {
				System.err.println("# could not stop " + next + ": " + ex);
			}
		}
		if (Thread.currentThread() != this.hook) {
			try {
				Runtime.getRuntime().removeShutdownHook(this.hook);
			}
			catch (IllegalStateException ex) {
				// shutting down: the hook runs or has run
			}
		}
	}

}
