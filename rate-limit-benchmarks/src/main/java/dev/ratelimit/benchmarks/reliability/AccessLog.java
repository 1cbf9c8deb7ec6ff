package dev.ratelimit.benchmarks.reliability;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Tomcat's access log of a sample app instance, as {@link SampleApp} configures it: one
 * line per request with the client key, the status, when the request began (epoch ms) and
 * how long it took (µs). The server's own record of what it admitted: it counts every
 * request it answered, including those whose client gave up.
 */
final class AccessLog {

	private final List<Entry> entries;

	private AccessLog(List<Entry> entries) {
		this.entries = entries;
	}

	/**
	 * Reads every log file of the directories (several instances: one fleet); an absent
	 * directory has no entries.
	 */
	static AccessLog read(List<Path> directories) {
		List<Entry> entries = new ArrayList<>();
		for (Path directory : directories) {
			if (!Files.isDirectory(directory)) {
				continue;
			}
			try (Stream<Path> files = Files.list(directory)) {
				for (Path file : files.filter((f) -> f.toString().endsWith(".log")).sorted().toList()) {
					try (BufferedReader reader = Files.newBufferedReader(file)) {
						String line;
						while ((line = reader.readLine()) != null) {
							Entry entry = Entry.parse(line);
							if (entry != null) {
								entries.add(entry);
							}
						}
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return new AccessLog(entries);
	}

	static AccessLog read(Path directory) {
		return read(List.of(directory));
	}

	int size() {
		return this.entries.size();
	}

	/**
	 * Returns the admitted (2xx) requests of each client whose key passes the filter.
	 */
	Map<String, Long> admitted(Predicate<String> clients) {
		return admitted(clients, Long.MIN_VALUE, Long.MAX_VALUE);
	}

	/**
	 * Returns the admitted (2xx) requests that began within {@code [from, to)} (epoch ms)
	 * of each client whose key passes the filter.
	 */
	Map<String, Long> admitted(Predicate<String> clients, long fromMillis, long toMillis) {
		Map<String, Long> admitted = new HashMap<>();
		for (Entry entry : this.entries) {
			if (entry.admitted() && entry.beganMillis >= fromMillis && entry.beganMillis < toMillis
					&& clients.test(entry.client)) {
				admitted.merge(entry.client, 1L, Long::sum);
			}
		}
		return admitted;
	}

	/**
	 * Returns the clients whose key passes the filter that sent any request.
	 */
	long clients(Predicate<String> clients) {
		return this.entries.stream().map(Entry::client).filter(clients).distinct().count();
	}

	/**
	 * Returns the most requests, whatever their status, that any client whose key passes
	 * the filter sent.
	 */
	long mostRequests(Predicate<String> clients) {
		Map<String, Long> requests = new HashMap<>();
		for (Entry entry : this.entries) {
			if (clients.test(entry.client)) {
				requests.merge(entry.client, 1L, Long::sum);
			}
		}
		return requests.values().stream().mapToLong(Long::longValue).max().orElse(0);
	}

	/**
	 * Returns the admitted requests of one client that began within {@code [from, to)}
	 * (epoch ms).
	 */
	long admitted(String client, long fromMillis, long toMillis) {
		return admitted(client::equals, fromMillis, toMillis).getOrDefault(client, 0L);
	}

	/**
	 * One request.
	 *
	 * @param client the client key, {@code -} for none
	 * @param status the status
	 * @param beganMillis when Tomcat began the request (epoch ms)
	 * @param micros how long it took
	 */
	record Entry(String client, int status, long beganMillis, long micros) {

		boolean admitted() {
			return this.status >= 200 && this.status < 300;
		}

		static @Nullable Entry parse(String line) {
			String[] fields = line.strip().split(" ");
			if (fields.length != 4) {
				return null;
			}
			try {
				return new Entry(fields[0], Integer.parseInt(fields[1]), Long.parseLong(fields[2]),
						Long.parseLong(fields[3]));
			}
			catch (NumberFormatException ex) {
				return null;
			}
		}

	}

}
