package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Writes {@code docs/RELIABILITY.md} from the results files of a campaign: one section
 * per scenario with its setup, notes and a table (one row per case, one column per
 * measure, a row of targets, a verdict per case), a summary, the commit and the machine.
 * <p>
 * {@code ReliabilityReport [--update] <results dir> <report> <quick|full> <commit> <seconds> [note]};
 * with {@code --update}, only the sections of the scenarios run are replaced.
 */
public final class ReliabilityReport {

	static final String BEFORE = "before.";

	static final String AFTER = "after.";

	/** The scenarios in the report's order, with their titles and what they do. */
	static final Map<String, String[]> SCENARIOS = new LinkedHashMap<>();

	static {
		SCENARIOS.put("saturation", new String[] { "Saturation",
				"wrk on one hot client and on 10,000 clients at each connection count, in each failure mode, on a "
						+ "freshly started and on a warmed-up instance, Redis up throughout. Target: no client "
						+ "admitted beyond its bound (in local mode, the bound from Redis plus the instance's local "
						+ "limits), no unplanned 5xx." });
		SCENARIOS.put("restarts", new String[] { "Redis killed and restarted under load",
				"Redis killed (SIGKILL) and restarted empty, several times, under HTTP load, in each failure mode. "
						+ "Targets: 0 unplanned 5xx; p99 during outages ≤ `redis.timeout` + 50 ms; recovery ≤ 1 s "
						+ "after the restarted Redis answers PING; in local mode, the fleet's admissions within the "
						+ "stated bound." });
		SCENARIOS.put("sentinel", new String[] { "Sentinel failover",
				"One master, one replica, three sentinels; the master killed under load. Targets: recovery ≤ 5 s "
						+ "after the kill; state preserved (a client exhausted before the failover stays refused)." });
		SCENARIOS.put("cluster", new String[] { "Cluster master failover",
				"Three masters, three replicas; a master killed under load. Targets: recovery ≤ 5 s after the kill; "
						+ "no client admitted beyond the stated bound." });
		SCENARIOS.put("slow-redis", new String[] { "Slow, hung and gone Redis",
				"Latency injected on Redis's replies by a TCP proxy in the campaign (0 to 1000 ms), then no replies, "
						+ "then refused connections. Targets: every decision ends within `redis.timeout` (requests "
						+ "within it + 50 ms); request threads do not pile up; the cool-down behaves as documented "
						+ "(one call per second reaches a failing Redis; Redis is used again within a cool-down)." });
		SCENARIOS.put("key-flood", new String[] { "Key flood (in memory)",
				"Distinct keys, some of them 8 KB, through the in-memory limiter against `max-keys`. Targets: the "
						+ "heap after GC stops growing once `max-keys` keys are held; no permits handed back to "
						+ "exhausted clients; the figure of a normal client's decision p99 during the flood." });
		SCENARIOS.put("fuzz", new String[] { "Fuzz",
				"The project's jqwik fuzz tests (`*Fuzz*`) in their long form. Target: none fails." });
		SCENARIOS.put("soak", new String[] { "Soak",
				"Load for minutes with a Redis fault at a fixed interval. Targets: heap after GC at the end within "
						+ "10 % of the start; no leaked permits; no leaked connections or threads." });
		SCENARIOS.put("app-integration", new String[] { "Application integration (issue 32)",
				"How real applications fail, deploy and authenticate: each finding of issue 32 reproduced over real "
						+ "HTTP against the sample (servlet, Tomcat) and the reactive example (WebFlux, Netty), "
						+ "started from their jars as built before issue 32 and at this run's commit, with the same "
						+ "command line; Redis and a Redis Cluster of their own where a case needs one. Each row: a "
						+ "measure of one case, before and after. Targets: the behaviour the fixes document, for the "
						+ "\"after\" figures." });
	}

	private ReliabilityReport() {
	}

	public static void main(String[] args) throws IOException {
		boolean update = args.length > 0 && args[0].equals("--update");
		String[] rest = update ? Arrays.copyOfRange(args, 1, args.length) : args;
		if (rest.length < 5) {
			System.err.println(
					"usage: ReliabilityReport [--update] <results dir> <report> <quick|full> <commit> <seconds> [note]");
			System.exit(2);
		}
		Path results = Path.of(rest[0]);
		Path file = Path.of(rest[1]);
		String note = (rest.length > 5) ? rest[5] : "";
		ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
		String report = update
				? update(Files.readString(file), read(results), runs(results), rest[2], rest[3],
						Long.parseLong(rest[4]), note, now)
				: render(read(results), runs(results), rest[2], rest[3], Long.parseLong(rest[4]), note,
						Machine.describe(), now);
		Files.writeString(file, report);
	}

	/**
	 * Reads every scenario's results file: its figures and notes, by scenario.
	 */
	static Map<String, Results> read(Path directory) throws IOException {
		Map<String, Results> all = new LinkedHashMap<>();
		for (String scenario : SCENARIOS.keySet()) {
			Path file = directory.resolve(scenario + ".tsv");
			if (Files.exists(file)) {
				Results results = new Results(new ArrayList<>(), new ArrayList<>());
				for (String line : Files.readAllLines(file)) {
					if (line.startsWith(Figure.PREFIX + "\t")) {
						results.figures.add(Figure.parse(line));
					}
					else if (line.startsWith(Figures.NOTE + "\t")) {
						results.notes.add(line.substring(line.indexOf('\t', Figures.NOTE.length() + 1) + 1));
					}
				}
				all.put(scenario, results);
			}
		}
		return all;
	}

	/**
	 * Reads {@code runs.tsv}, which {@code reliability.sh} writes: per scenario, how it
	 * ended, its seconds, and the load average before and after.
	 */
	static Map<String, String[]> runs(Path directory) throws IOException {
		Map<String, String[]> runs = new LinkedHashMap<>();
		Path file = directory.resolve("runs.tsv");
		if (Files.exists(file)) {
			for (String line : Files.readAllLines(file)) {
				String[] fields = line.split("\t", -1);
				if (fields.length >= 5) {
					runs.put(fields[0], fields);
				}
			}
		}
		return runs;
	}

	static String render(Map<String, Results> all, Map<String, String[]> runs, String mode, String commit, long seconds,
			String note, Map<String, String> machine, ZonedDateTime date) {
		StringBuilder out = new StringBuilder();
		out.append("# Reliability\n\n");
		out.append("> **")
			.append(mode.equals("quick") ? "Quick run" : "Full run")
			.append("** (`rate-limit-benchmarks/")
			.append("reliability.sh")
			.append(mode.equals("quick") ? " --quick" : "")
			.append("`) of commit `")
			.append(commit)
			.append("`, ")
			.append(date.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")))
			.append(" UTC, ")
			.append(minutes(seconds))
			.append(".")
			.append(mode.equals("quick")
					? " A quick run has shorter phases and fewer points: for checking, not for " + "claims." : "")
			.append(note.isBlank() ? "" : " " + note.strip())
			.append("\n\n");
		out.append(intro());

		out.append("## Summary\n\n| scenario | outcome | time | load average (start → end) | cases met | missed |\n")
			.append("|---|---|---|---|---|---|\n");
		for (String scenario : SCENARIOS.keySet()) {
			out.append(summaryRow(scenario, all.get(scenario), runs.get(scenario)));
		}
		out.append('\n');

		for (String scenario : SCENARIOS.keySet()) {
			out.append(section(scenario, all.get(scenario), ""));
		}

		out.append("## Run and machine\n\n| | |\n|---|---|\n");
		out.append("| commit | `").append(commit).append("` |\n");
		out.append("| mode | ").append(mode).append(" |\n");
		out.append("| date | ").append(date.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm"))).append(" UTC |\n");
		out.append("| duration | ").append(minutes(seconds)).append(" |\n");
		machine.forEach((key, value) -> out.append("| ").append(key).append(" | ").append(value).append(" |\n"));
		out.append('\n');
		out.append("The machine's other load shows in the load average of each scenario (summary): with 2 cores, ")
			.append("anything above 2 means the campaign shared the CPU with other work, and latency figures are ")
			.append("then noisy.\n\n");

		out.append(reproduce());
		out.append("<details><summary>Every figure as printed</summary>\n\n```\n");
		for (Results results : all.values()) {
			for (Figure figure : results.figures) {
				out.append(figure.printed()).append('\n');
			}
		}
		out.append("```\n\n</details>\n");
		return out.toString();
	}

	/**
	 * What the report is, between its first line and its summary: the same in a report
	 * and its updates.
	 */
	static String intro() {
		return "Fault injection and load against the sample app (`redis` profile) and the in-memory limiter, on "
				+ "servers the campaign starts itself on free ports: how the rate limiter behaves when Redis is "
				+ "saturated, killed, failed over, slow, hung or gone, and under a flood of keys; and how the sample "
				+ "and the reactive example fail, deploy and authenticate, before and after issue 32's fixes. "
				+ "Written by `rate-limit-benchmarks/reliability.sh [--quick] [--update]`, which also prints every "
				+ "figure as `reliability <scenario>.<case>.<measure> <value>`. A cell marked ✗ missed its "
				+ "target; a case is *met* when all its targeted cells are.\n\n"
				+ "Every HTTP scenario of issue 18 (all but the application integration, which says what it sends) "
				+ "keys the `api` policy by the `X-Client` header and limits every client to 6/1m (a token bucket of "
				+ "capacity 6); it is the only policy on the requests. Admissions are counted per client from "
				+ "Tomcat's access log (what the server answered, whether or not the client saw it) and compared "
				+ "with the bound the configuration allows.\n\n";
	}

	/** How to run the campaign again: the same in a report and its updates. */
	static String reproduce() {
		return "## Reproduce\n\n```\nrate-limit-benchmarks/reliability.sh           # full: about an hour\n"
				+ "rate-limit-benchmarks/reliability.sh --quick   # shorter phases, fewer points, for checking\n"
				+ "RELIABILITY_SCENARIOS='restarts soak' rate-limit-benchmarks/reliability.sh --quick   # some "
				+ "scenarios only\n"
				+ "RELIABILITY_SCENARIOS=app-integration rate-limit-benchmarks/reliability.sh --quick --update   # "
				+ "one section, the rest kept\n```\n\n"
				+ "Needs `redis-server` (7, which also runs the sentinels), `wrk` and a JDK with `jcmd` on the "
				+ "`PATH` (the application integration needs only `redis-server` and `java`); it builds the jars of "
				+ "the commit before issue 32 itself, from `git archive`. Logs of every process: "
				+ "`rate-limit-benchmarks/target/reliability/logs/`.\n\n";
	}

	/**
	 * The line of a scenario in the summary table: how its run ended, its time, the load
	 * average, and how many of its cases met and missed their targets.
	 */
	private static String summaryRow(String scenario, @Nullable Results results, String @Nullable [] run) {
		String title = SCENARIOS.get(scenario)[0];
		int met = 0;
		int missed = 0;
		if (results != null) {
			for (Row row : results.rows()) {
				if (row.verdict() == Target.Verdict.MET) {
					met++;
				}
				else if (row.verdict() == Target.Verdict.MISSED) {
					missed++;
				}
			}
		}
		return "| [" + title + "](#" + anchor(title) + ") | "
				+ ((run != null) ? run[1] : (results != null) ? "?" : "not run") + " | "
				+ ((run != null) ? run[2] + " s" : "") + " | " + ((run != null) ? run[3] + " → " + run[4] : "") + " | "
				+ met + " | " + missed + " |\n";
	}

	/**
	 * The section of a scenario: its title, what it does, an optional line on the run it
	 * comes from, its notes and its table.
	 */
	private static String section(String scenario, @Nullable Results results, String provenance) {
		StringBuilder out = new StringBuilder();
		out.append("## ").append(SCENARIOS.get(scenario)[0]).append("\n\n");
		if (!provenance.isEmpty()) {
			out.append("> ").append(provenance).append("\n\n");
		}
		out.append(SCENARIOS.get(scenario)[1]).append("\n\n");
		if (results == null) {
			out.append("*Not part of this run.*\n\n");
			return out.toString();
		}
		for (String line : results.notes) {
			out.append("- ").append(line).append('\n');
		}
		if (!results.notes.isEmpty()) {
			out.append('\n');
		}
		if (results.comparesVersions()) {
			beforeAndAfter(out, results);
		}
		else {
			table(out, results);
		}
		return out.toString();
	}

	/**
	 * Replaces, in a report written earlier, the sections of the scenarios that this run
	 * ran (with a line saying which run they come from), their lines in the summary and
	 * among the printed figures; everything else stays as it was. A scenario the report
	 * has no section for yet gets one in its place in the scenarios' order.
	 */
	static String update(String existing, Map<String, Results> all, Map<String, String[]> runs, String mode,
			String commit, long seconds, String note, ZonedDateTime date) {
		String report = existing;
		List<String> run = SCENARIOS.keySet().stream().filter(all::containsKey).toList();
		String scenarios = (run.size() == 1) ? "RELIABILITY_SCENARIOS=" + run.get(0) + " "
				: "RELIABILITY_SCENARIOS='" + String.join(" ", run) + "' ";
		for (String scenario : SCENARIOS.keySet()) {
			Results results = all.get(scenario);
			if (results == null) {
				continue;
			}
			String provenance = "From a separate " + (mode.equals("quick") ? "quick" : "full") + " run, `" + scenarios
					+ "rate-limit-benchmarks/reliability.sh" + (mode.equals("quick") ? " --quick" : "")
					+ " --update`, of commit `" + commit + "`, "
					+ date.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")) + " UTC, " + minutes(seconds)
					+ "; the other sections come from the run named at the top."
					+ (note.isBlank() ? "" : " " + note.strip());
			report = replaceSection(report, scenario, section(scenario, results, provenance));
			report = replaceSummaryRow(report, scenario, summaryRow(scenario, results, runs.get(scenario)));
			report = replacePrinted(report, scenario, results);
		}
		return replaceStaticParts(report);
	}

	/**
	 * Writes the current intro and "Reproduce" section into a report written earlier, so
	 * that they describe every scenario it now holds.
	 */
	private static String replaceStaticParts(String report) {
		String updated = report;
		int introStart = updated.indexOf("\n\n", updated.indexOf("\n> **")) + 2;
		int summary = updated.indexOf("## Summary\n");
		if (introStart > 1 && summary > introStart) {
			updated = updated.substring(0, introStart) + intro() + updated.substring(summary);
		}
		int reproduce = updated.indexOf("## Reproduce\n");
		int details = updated.indexOf("<details><summary>Every figure as printed");
		if (reproduce >= 0 && details > reproduce) {
			updated = updated.substring(0, reproduce) + reproduce() + updated.substring(details);
		}
		return updated;
	}

	private static String replaceSection(String report, String scenario, String section) {
		int start = sectionStart(report, scenario);
		if (start >= 0) {
			int end = report.indexOf("\n## ", start + 1);
			return report.substring(0, start) + section + report.substring((end < 0) ? report.length() : end + 1);
		}
		// before the section of the next scenario the report has, else before the run's
		// details
		boolean after = false;
		for (String other : SCENARIOS.keySet()) {
			if (after && sectionStart(report, other) >= 0) {
				int next = sectionStart(report, other);
				return report.substring(0, next) + section + report.substring(next);
			}
			after |= other.equals(scenario);
		}
		int run = report.indexOf("\n## Run and machine\n");
		return (run < 0) ? report + "\n" + section : report.substring(0, run + 1) + section + report.substring(run + 1);
	}

	private static int sectionStart(String report, String scenario) {
		String heading = "## " + SCENARIOS.get(scenario)[0] + "\n";
		if (report.startsWith(heading)) {
			return 0;
		}
		int at = report.indexOf("\n" + heading);
		return (at < 0) ? -1 : at + 1;
	}

	private static String replaceSummaryRow(String report, String scenario, String row) {
		List<String> lines = new ArrayList<>(Arrays.asList(report.split("\n", -1)));
		int at = summaryRowIndex(lines, scenario);
		if (at >= 0) {
			lines.set(at, row.stripTrailing());
			return String.join("\n", lines);
		}
		// after the row of the scenario before it, else after the table's header
		int previous = -1;
		for (String other : SCENARIOS.keySet()) {
			if (other.equals(scenario)) {
				break;
			}
			previous = Math.max(previous, summaryRowIndex(lines, other));
		}
		if (previous < 0) {
			int summary = lines.indexOf("## Summary");
			if (summary < 0) {
				return report;
			}
			previous = summary + 3;
		}
		lines.add(previous + 1, row.stripTrailing());
		return String.join("\n", lines);
	}

	private static int summaryRowIndex(List<String> lines, String scenario) {
		String prefix = "| [" + SCENARIOS.get(scenario)[0] + "](#";
		for (int i = 0; i < lines.size(); i++) {
			if (lines.get(i).startsWith(prefix)) {
				return i;
			}
		}
		return -1;
	}

	/** Replaces a scenario's lines among the printed figures with this run's. */
	private static String replacePrinted(String report, String scenario, Results results) {
		String open = "<details><summary>Every figure as printed</summary>\n\n```\n";
		int start = report.indexOf(open);
		if (start < 0) {
			return report;
		}
		int body = start + open.length();
		int end = report.indexOf("```\n", body);
		if (end < 0) {
			return report;
		}
		StringBuilder printed = new StringBuilder();
		for (String line : report.substring(body, end).split("\n")) {
			if (!line.isEmpty() && !line.startsWith("reliability " + scenario + ".")) {
				printed.append(line).append('\n');
			}
		}
		for (Figure figure : results.figures) {
			printed.append(figure.printed()).append('\n');
		}
		return report.substring(0, body) + printed + report.substring(end);
	}

	/**
	 * The table of a scenario that measures each case against two versions: a line per
	 * measure of a case, with its value before and after, and the target and verdict of
	 * the value after.
	 */
	private static void beforeAndAfter(StringBuilder out, Results results) {
		out.append("| case | measure | before | after | target | verdict |\n|---|---|---:|---:|---|---|\n");
		for (Row row : results.rows()) {
			Set<String> measures = new LinkedHashSet<>();
			for (String column : row.cells.keySet()) {
				measures.add(column.substring(column.indexOf('.') + 1));
			}
			boolean first = true;
			for (String measure : measures) {
				Figure before = row.cells.get(BEFORE + measure);
				Figure after = row.cells.get(AFTER + measure);
				out.append("| ")
					.append(first ? "`" + row.name + "`" : "")
					.append(" | ")
					.append(measure)
					.append(" | ")
					.append((before != null) ? before.value() : "")
					.append(" | ")
					.append((after != null) ? after.value() : "")
					.append((after != null && after.verdict() == Target.Verdict.MISSED) ? " ✗" : "")
					.append(" | ")
					.append((after != null) ? after.target() : "")
					.append(" | ")
					.append((after != null) ? after.verdict().label() : "")
					.append(" |\n");
				first = false;
			}
		}
		out.append('\n');
	}

	private static void table(StringBuilder out, Results results) {
		if (results.figures.isEmpty()) {
			out.append("*No figures.*\n\n");
			return;
		}
		List<Row> rows = results.rows();
		if (rows.size() == 1) {
			measures(out, rows.get(0));
			return;
		}
		Set<String> columns = new LinkedHashSet<>();
		Map<String, String> targets = new LinkedHashMap<>();
		for (Figure figure : results.figures) {
			columns.add(figure.column());
			if (!figure.target().isEmpty()) {
				// a column whose cases have different targets shows each case's in its
				// cell
				targets.merge(figure.column(), figure.target(), (one, other) -> one.equals(other) ? one : "");
			}
		}
		out.append("| case |");
		columns.forEach((column) -> out.append(' ').append(column).append(" |"));
		out.append(" verdict |\n|---|");
		columns.forEach((column) -> out.append("---:|"));
		out.append("---|\n| *target* |");
		columns.forEach((column) -> out.append(' ').append(targets.getOrDefault(column, "")).append(" |"));
		out.append(" |\n");
		for (Row row : rows) {
			out.append("| ").append(row.name).append(" |");
			for (String column : columns) {
				Figure figure = row.cells.get(column);
				out.append(' ');
				if (figure != null) {
					out.append(figure.value());
					if (!figure.target().isEmpty() && !figure.target().equals(targets.get(column))) {
						out.append(" (").append(figure.target()).append(')');
					}
					if (figure.verdict() == Target.Verdict.MISSED) {
						out.append(" ✗");
					}
				}
				out.append(" |");
			}
			out.append(' ').append(row.verdict().label()).append(" |\n");
		}
		out.append('\n');
	}

	/**
	 * The table of a scenario with one case: a line per measure, with its target and
	 * verdict.
	 */
	private static void measures(StringBuilder out, Row row) {
		out.append("| ").append(row.name).append(" | value | target | verdict |\n|---|---:|---|---|\n");
		for (Figure figure : row.cells.values()) {
			out.append("| ")
				.append(figure.column())
				.append(" | ")
				.append(figure.value())
				.append((figure.verdict() == Target.Verdict.MISSED) ? " ✗" : "")
				.append(" | ")
				.append(figure.target())
				.append(" | ")
				.append(figure.verdict().label())
				.append(" |\n");
		}
		out.append('\n');
	}

	private static String minutes(long seconds) {
		return (seconds >= 60) ? (seconds / 60) + " min " + (seconds % 60) + " s" : seconds + " s";
	}

	private static String anchor(String title) {
		return title.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9 -]", "").replace(' ', '-');
	}

	/**
	 * A scenario's figures and notes.
	 */
	record Results(List<Figure> figures, List<String> notes) {

		/**
		 * Whether every figure measures one of two versions ({@code before.} or
		 * {@code after.} its measure), as the application-integration scenario's do.
		 */
		boolean comparesVersions() {
			return !this.figures.isEmpty() && this.figures.stream()
				.allMatch((figure) -> figure.column().startsWith(BEFORE) || figure.column().startsWith(AFTER));
		}

		/** The figures by case, in the order they came. */
		List<Row> rows() {
			Map<String, Row> rows = new LinkedHashMap<>();
			for (Figure figure : this.figures) {
				rows.computeIfAbsent(figure.row(), (name) -> new Row(name, new LinkedHashMap<>())).cells
					.put(figure.column(), figure);
			}
			return List.copyOf(rows.values());
		}

	}

	/**
	 * One case: its figures by measure.
	 */
	record Row(String name, Map<String, Figure> cells) {

		Target.Verdict verdict() {
			boolean targeted = false;
			for (Figure figure : this.cells.values()) {
				if (figure.verdict() == Target.Verdict.MISSED) {
					return Target.Verdict.MISSED;
				}
				targeted |= figure.verdict() == Target.Verdict.MET;
			}
			return targeted ? Target.Verdict.MET : Target.Verdict.NONE;
		}

	}

}
