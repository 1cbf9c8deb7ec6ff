package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The machine a campaign ran on, as the report states it: cores, CPU model, memory, OS,
 * JDK, and the versions of the tools the campaign drives.
 */
final class Machine {

	private Machine() {
	}

	/**
	 * Returns the description, item by item, in the report's order.
	 */
	static Map<String, String> describe() {
		Map<String, String> items = new LinkedHashMap<>();
		items.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
		items.put("CPU", procField("/proc/cpuinfo", "model name").orElse(System.getProperty("os.arch")));
		items.put("memory", procField("/proc/meminfo", "MemTotal")
			.map((kb) -> String.format(Locale.ROOT, "%.1f GiB", Long.parseLong(kb.replaceAll("\\D", "")) / 1048576.0))
			.orElse("?"));
		items.put("OS", System.getProperty("os.name") + " " + System.getProperty("os.version"));
		items.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		items.put("redis-server", firstLine(List.of("redis-server", "--version")));
		items.put("wrk", firstLine(List.of("wrk", "--version")));
		return items;
	}

	/**
	 * Returns the value of the first {@code name : value} line of a file such as
	 * {@code /proc/cpuinfo}.
	 */
	static Optional<String> procField(String file, String name) {
		try {
			return Files.readAllLines(Path.of(file))
				.stream()
				.filter((line) -> line.startsWith(name) && line.indexOf(':') > 0)
				.map((line) -> line.substring(line.indexOf(':') + 1).strip())
				.findFirst();
		}
		catch (IOException ex) {
			return Optional.empty();
		}
	}

	/** The first line a command prints (wrk prints its version and exits with 1). */
	private static String firstLine(List<String> command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes());
			process.waitFor(10, TimeUnit.SECONDS);
			return output.lines().findFirst().orElse("?").strip();
		}
		catch (IOException ex) {
			return "not found";
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "?";
		}
	}

}
