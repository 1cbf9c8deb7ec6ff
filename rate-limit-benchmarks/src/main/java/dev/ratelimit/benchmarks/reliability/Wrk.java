package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Load from {@code wrk}, with the campaign's Lua script: requests of one hot client or of
 * many rotating clients, the responses counted by status. A run has a fixed length, or is
 * stopped early with {@code SIGINT}, on which wrk prints what it measured so far.
 */
final class Wrk {

	private static final Pattern REQUESTS = Pattern.compile("(\\d+) requests in ([\\d.]+)(us|ms|s|m)");

	private static final Pattern RATE = Pattern.compile("Requests/sec:\\s+([\\d.]+)");

	private static final Pattern LATENCY = Pattern.compile("^\\s+Latency\\s+(\\S+)\\s+(\\S+)\\s+(\\S+)",
			Pattern.MULTILINE);

	private static final Pattern P99 = Pattern.compile("^\\s+99%\\s+(\\S+)", Pattern.MULTILINE);

	private static final Pattern SOCKET_ERRORS = Pattern
		.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

	private static final Pattern STATUSES = Pattern.compile("^statuses(.*)$", Pattern.MULTILINE);

	private Wrk() {
	}

	/**
	 * Starts wrk against one URL.
	 * @param name names its log file
	 * @param connections the connections (two threads, or one for a single connection)
	 * @param duration the length of the run
	 * @param prefix the prefix of the client keys
	 * @param clients how many clients the requests rotate over
	 */
	static Run start(Processes processes, String name, String url, int connections, Duration duration, String prefix,
			int clients) {
		Path log = processes.logDirectory().resolve("wrk-" + name + ".log");
		try {
			Files.deleteIfExists(log);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		List<String> command = List.of("wrk", "-t" + Math.min(2, connections), "-c" + connections,
				"-d" + Math.max(1, duration.toSeconds()) + "s", "--timeout", "5s", "--latency", "-s",
				script(processes.logDirectory()).toString(), url);
		Process process = processes.start("wrk-" + name, command,
				Map.of("RELIABILITY_PREFIX", prefix, "RELIABILITY_KEYS", Integer.toString(clients)));
		return new Run(processes, process, log, System.nanoTime(), duration);
	}

	private static synchronized Path script(Path directory) {
		Path script = directory.resolve("reliability.lua");
		if (!Files.exists(script)) {
			try (InputStream in = Wrk.class.getResourceAsStream("reliability.lua")) {
				if (in == null) {
					throw new IllegalStateException("reliability.lua is missing from the class path");
				}
				Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return script;
	}

	/**
	 * Parses wrk's report, with the status line of the campaign's script.
	 */
	static Result parse(String output) {
		Matcher requests = REQUESTS.matcher(output);
		Matcher rate = RATE.matcher(output);
		Matcher latency = LATENCY.matcher(output);
		Matcher p99 = P99.matcher(output);
		if (!requests.find() || !rate.find()) {
			throw new IllegalStateException("Not a wrk report:\n" + output);
		}
		Matcher errors = SOCKET_ERRORS.matcher(output);
		long[] socket = new long[4];
		if (errors.find()) {
			for (int i = 0; i < 4; i++) {
				socket[i] = Long.parseLong(errors.group(i + 1));
			}
		}
		Map<String, Long> statuses = new LinkedHashMap<>();
		Matcher counted = STATUSES.matcher(output);
		if (counted.find()) {
			for (String pair : counted.group(1).strip().split(" ")) {
				int equals = pair.indexOf('=');
				if (equals > 0) {
					statuses.put(pair.substring(0, equals), Long.parseLong(pair.substring(equals + 1)));
				}
			}
		}
		return new Result(Long.parseLong(requests.group(1)), millis(requests.group(2) + requests.group(3)) / 1000,
				Double.parseDouble(rate.group(1)), p99.find() ? millis(p99.group(1)) : Double.NaN,
				latency.find() ? millis(latency.group(3)) : Double.NaN, socket[0], socket[1], socket[2], socket[3],
				statuses);
	}

	/**
	 * Converts one of wrk's durations ({@code 812.00us}, {@code 1.23ms}, {@code 1.02s},
	 * {@code 1.50m}) to ms.
	 */
	static double millis(String text) {
		String value = text.toLowerCase(Locale.ROOT);
		if (value.endsWith("us")) {
			return Double.parseDouble(value.substring(0, value.length() - 2)) / 1000;
		}
		if (value.endsWith("ms")) {
			return Double.parseDouble(value.substring(0, value.length() - 2));
		}
		if (value.endsWith("s")) {
			return Double.parseDouble(value.substring(0, value.length() - 1)) * 1000;
		}
		if (value.endsWith("m")) {
			return Double.parseDouble(value.substring(0, value.length() - 1)) * 60_000;
		}
		if (value.endsWith("h")) {
			return Double.parseDouble(value.substring(0, value.length() - 1)) * 3_600_000;
		}
		return Double.parseDouble(value);
	}

	/**
	 * A wrk run in progress.
	 */
	static final class Run {

		private final Processes processes;

		private final Process process;

		private final Path log;

		private final long startedNanos;

		private final Duration duration;

		Run(Processes processes, Process process, Path log, long startedNanos, Duration duration) {
			this.processes = processes;
			this.process = process;
			this.log = log;
			this.startedNanos = startedNanos;
			this.duration = duration;
		}

		/**
		 * Waits for the run to end by itself (at most its length plus {@code grace}),
		 * else stops it, and returns what it measured.
		 */
		Result await(Duration grace) {
			long end = this.startedNanos + this.duration.toNanos() + grace.toNanos();
			try {
				if (!this.process.waitFor(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
					return stop();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
			return result();
		}

		/**
		 * Stops the run now ({@code SIGINT}: wrk prints its report) and returns what it
		 * measured.
		 */
		Result stop() {
			this.processes.signal(this.process, "INT");
			try {
				if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
					Processes.stop(this.process);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
			return result();
		}

		private Result result() {
			try {
				return parse(Files.readString(this.log));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

	/**
	 * What a run measured.
	 *
	 * @param requests the responses it counted
	 * @param seconds the run's length
	 * @param requestsPerSecond its throughput
	 * @param p99Millis the 99th percentile of its latencies
	 * @param maxMillis its longest latency
	 * @param connectErrors connections that failed
	 * @param readErrors reads that failed
	 * @param writeErrors writes that failed
	 * @param timeouts requests without an answer within 5 s
	 * @param statuses the responses by status ({@code 503-planned} for the deny mode's
	 * 503s)
	 */
	record Result(long requests, double seconds, double requestsPerSecond, double p99Millis, double maxMillis,
			long connectErrors, long readErrors, long writeErrors, long timeouts, Map<String, Long> statuses) {

		long socketErrors() {
			return this.connectErrors + this.readErrors + this.writeErrors + this.timeouts;
		}

		/**
		 * Returns the 5xx responses other than the deny mode's 503s.
		 */
		long unplanned5xx() {
			return this.statuses.entrySet()
				.stream()
				.filter((entry) -> entry.getKey().startsWith("5") && !entry.getKey().equals("503-planned"))
				.mapToLong(Map.Entry::getValue)
				.sum();
		}

	}

}
