package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The project's fuzz tests (jqwik properties in test classes named {@code *Fuzz*}) in
 * their long form: many more tries per property than the build runs. Skipped, with the
 * reason, while there are none.
 */
final class Fuzz implements Scenario {

	private static final List<String> MODULES = List.of("rate-limit-core", "rate-limit-spring-boot-starter");

	private static final Pattern SUITE = Pattern.compile("<testsuite\\s[^>]*>");

	@Override
	public void run(Settings settings, Processes processes, Figures figures) throws IOException {
		int tries = settings.pick(1_000, 20_000);
		long limitSeconds = settings.pick(240L, 1500L);
		List<Path> classes = fuzzClasses(settings.root());
		String row = "fuzz";
		if (classes.isEmpty()) {
			figures.note("Skipped: the project has no `*Fuzz*` test classes yet (in " + String.join(" or ", MODULES)
					+ "). Once it has, this scenario runs them with " + tries + " tries per property.");
			figures.add(row, "tests", "skipped", Target.NONE, Target.Verdict.NONE);
			return;
		}
		figures.note(classes.size() + " test classes ("
				+ String.join(", ",
						classes.stream().map((path) -> path.getFileName().toString().replace(".java", "")).toList())
				+ "), run with `-Djqwik.tries.default=" + tries + "` through Maven, for at most " + limitSeconds
				+ " s.");
		for (String module : MODULES) {
			deleteReports(settings.root().resolve(module).resolve("target/surefire-reports"));
		}
		long started = System.nanoTime();
		String outcome = "completed";
		try {
			// a failure in core's tests does not keep the starter's from running: the
			// reports tell what failed
			processes.run(List.of(settings.root().resolve("mvnw").toString(), "-B", "-q", "-f",
					settings.root().resolve("pom.xml").toString(), "-pl", "rate-limit-spring-boot-starter", "-am",
					"test", "-Dtest=*Fuzz*", "-Dsurefire.failIfNoSpecifiedTests=false",
					"-Djqwik.tries.default=" + tries, "-Dmaven.test.failure.ignore=true"), limitSeconds);
		}
		catch (IllegalStateException ex) {
			outcome = ex.getMessage().contains("longer than") ? "timed out" : "failed";
			figures
				.note("Maven " + outcome + ": " + ex.getMessage().lines().limit(20).reduce("", (a, b) -> a + " " + b));
		}
		long tests = 0;
		long failed = 0;
		long skipped = 0;
		for (String module : MODULES) {
			for (String report : reports(settings.root().resolve(module).resolve("target/surefire-reports"))) {
				Matcher suite = SUITE.matcher(report);
				if (suite.find()) {
					tests += attribute(suite.group(), "tests");
					failed += attribute(suite.group(), "errors") + attribute(suite.group(), "failures");
					skipped += attribute(suite.group(), "skipped");
				}
			}
		}
		figures.add(row, "tries-per-property", tries);
		figures.add(row, "tests", tests);
		figures.add(row, "failed", failed, Target.zero());
		figures.add(row, "skipped", skipped);
		figures.add(row, "seconds", (System.nanoTime() - started) / 1e9);
		figures.add(row, "build", outcome, Target.NONE,
				outcome.equals("completed") ? Target.Verdict.MET : Target.Verdict.MISSED);
	}

	/**
	 * A count attribute of a surefire report's {@code <testsuite>} element; 0 if absent.
	 */
	static long attribute(String element, String name) {
		Matcher matcher = Pattern.compile("\\s" + name + "=\"(\\d+)\"").matcher(element);
		return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
	}

	static List<Path> fuzzClasses(Path root) throws IOException {
		List<Path> found = new ArrayList<>();
		for (String module : MODULES) {
			Path tests = root.resolve(module).resolve("src/test/java");
			if (Files.isDirectory(tests)) {
				try (Stream<Path> files = Files.walk(tests)) {
					files.filter((file) -> file.getFileName().toString().matches(".*Fuzz.*\\.java"))
						.sorted()
						.forEach(found::add);
				}
			}
		}
		return found;
	}

	private static void deleteReports(Path directory) throws IOException {
		for (Path report : reportFiles(directory)) {
			Files.delete(report);
		}
	}

	private static List<String> reports(Path directory) throws IOException {
		List<String> reports = new ArrayList<>();
		for (Path report : reportFiles(directory)) {
			reports.add(Files.readString(report));
		}
		return reports;
	}

	private static List<Path> reportFiles(Path directory) throws IOException {
		if (!Files.isDirectory(directory)) {
			return List.of();
		}
		try (Stream<Path> files = Files.list(directory)) {
			return files.filter((file) -> file.getFileName().toString().matches("TEST-.*Fuzz.*\\.xml")).toList();
		}
	}

}
