package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Readings of another JVM (a sample app instance) from outside: its heap after a full
 * collection, through {@code jcmd}, and its open sockets and connections, from
 * {@code /proc}.
 */
final class JvmReadings {

	/** The state of an established connection in {@code /proc/net/tcp}. */
	private static final String ESTABLISHED = "01";

	private static final Pattern HEAP_USED = Pattern.compile("heap\\s+total\\s+\\d+K, used (\\d+)K");

	private JvmReadings() {
	}

	/**
	 * Returns the heap in use right after a full collection: {@code jcmd <pid> GC.run}
	 * ({@code System.gc()}, a full stop-the-world collection with G1), then
	 * {@code jcmd <pid> GC.heap_info}.
	 * @return the bytes in use
	 */
	static long heapAfterGc(Processes processes, long pid) {
		String jcmd = jcmd();
		processes.run(List.of(jcmd, Long.toString(pid), "GC.run"), 120);
		return heapUsed(processes.run(List.of(jcmd, Long.toString(pid), "GC.heap_info"), 60));
	}

	static long heapUsed(String heapInfo) {
		Matcher matcher = HEAP_USED.matcher(heapInfo);
		if (!matcher.find()) {
			throw new IllegalStateException("No heap figure in GC.heap_info: " + heapInfo);
		}
		return Long.parseLong(matcher.group(1)) * 1024;
	}

	/**
	 * The {@code jcmd} of the JDK that runs the campaign, which also runs the sample app.
	 */
	private static String jcmd() {
		Path own = Path.of(System.getProperty("java.home"), "bin", "jcmd");
		return Files.isExecutable(own) ? own.toString() : "jcmd";
	}

	/**
	 * Returns the TCP connections a process holds open to a port (such as Redis's, or a
	 * proxy's in front of it), from {@code /proc}: its socket descriptors matched with
	 * the kernel's table of TCP sockets.
	 */
	static long connectionsTo(long pid, int remotePort) {
		Set<String> inodes = socketInodes(pid);
		long count = 0;
		for (String table : List.of("tcp", "tcp6")) {
			Path file = Path.of("/proc", Long.toString(pid), "net", table);
			try {
				for (String line : Files.readAllLines(file)) {
					String[] fields = line.strip().split("\\s+");
					// sl local_address rem_address st ... inode (the tenth field)
					if (fields.length > 9 && fields[2].contains(":") && inodes.contains(fields[9])
							&& Integer.parseInt(fields[2].substring(fields[2].indexOf(':') + 1), 16) == remotePort
							&& fields[3].equals(ESTABLISHED)) {
						count++;
					}
				}
			}
			catch (IOException | NumberFormatException ex) {
				// no such table
			}
		}
		return count;
	}

	/**
	 * Returns the sockets a process holds open (listening, connected, Unix), or -1 where
	 * {@code /proc} cannot tell.
	 */
	static long sockets(long pid) {
		Set<String> inodes = socketInodes(pid);
		return inodes.isEmpty() ? -1 : inodes.size();
	}

	private static Set<String> socketInodes(long pid) {
		Set<String> inodes = new HashSet<>();
		try (Stream<Path> links = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
			links.forEach((link) -> {
				try {
					String target = Files.readSymbolicLink(link).toString();
					if (target.startsWith("socket:[")) {
						inodes.add(target.substring(8, target.length() - 1));
					}
				}
				catch (IOException ex) {
					// closed meanwhile
				}
			});
		}
		catch (IOException ex) {
			// not Linux, or gone
		}
		return inodes;
	}

}
