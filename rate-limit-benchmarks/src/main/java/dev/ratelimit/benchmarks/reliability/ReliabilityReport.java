package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes {@code docs/RELIABILITY.md} from the results files of a campaign: one section
 * per scenario with its setup, notes and a table (one row per case, one column per
 * measure, a row of targets, a verdict per case), a summary, the commit and the machine.
 * <p>
 * {@code ReliabilityReport <results dir> <report> <quick|full> <commit> <seconds> [note]}
 */
public final class ReliabilityReport {

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
	}

	private ReliabilityReport() {
	}

	public static void main(String[] args) throws IOException {
		if (args.length < 5) {
			System.err
				.println("usage: ReliabilityReport <results dir> <report> <quick|full> <commit> <seconds> [note]");
			System.exit(2);
		}
		Path results = Path.of(args[0]);
		String note = (args.length > 5) ? args[5] : "";
		String report = render(read(results), runs(results), args[2], args[3], Long.parseLong(args[4]), note,
				Machine.describe(), ZonedDateTime.now(ZoneOffset.UTC));
		Files.writeString(Path.of(args[1]), report);
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
		out.append("Fault injection and load against the sample app (`redis` profile) and the in-memory limiter, on ")
			.append("servers the campaign starts itself on free ports: how the rate limiter behaves when Redis is ")
			.append("saturated, killed, failed over, slow, hung or gone, and under a flood of keys. Written by ")
			.append("`rate-limit-benchmarks/reliability.sh [--quick]`, which also prints every figure as ")
			.append("`reliability <scenario>.<case>.<measure> <value>`. A cell marked ✗ missed its target; a case ")
			.append("is *met* when all its targeted cells are.\n\n");
		out.append("Every HTTP scenario keys the `api` policy by the `X-Client` header and limits every client to ")
			.append("6/1m (a token bucket of capacity 6); it is the only policy on the requests. Admissions are ")
			.append("counted per client from Tomcat's access log (what the server answered, whether or not the ")
			.append("client saw it) and compared with the bound the configuration allows.\n\n");

		out.append("## Summary\n\n| scenario | outcome | time | load average (start → end) | cases met | missed |\n")
			.append("|---|---|---|---|---|---|\n");
		for (Map.Entry<String, String[]> scenario : SCENARIOS.entrySet()) {
			String name = scenario.getKey();
			Results results = all.get(name);
			String[] run = runs.get(name);
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
			out.append("| [")
				.append(scenario.getValue()[0])
				.append("](#")
				.append(anchor(scenario.getValue()[0]))
				.append(") | ")
				.append((run != null) ? run[1] : (results != null) ? "?" : "not run")
				.append(" | ")
				.append((run != null) ? run[2] + " s" : "")
				.append(" | ")
				.append((run != null) ? run[3] + " → " + run[4] : "")
				.append(" | ")
				.append(met)
				.append(" | ")
				.append(missed)
				.append(" |\n");
		}
		out.append('\n');

		for (Map.Entry<String, String[]> scenario : SCENARIOS.entrySet()) {
			out.append("## ")
				.append(scenario.getValue()[0])
				.append("\n\n")
				.append(scenario.getValue()[1])
				.append("\n\n");
			Results results = all.get(scenario.getKey());
			if (results == null) {
				out.append("*Not part of this run.*\n\n");
				continue;
			}
			for (String line : results.notes) {
				out.append("- ").append(line).append('\n');
			}
			if (!results.notes.isEmpty()) {
				out.append('\n');
			}
			table(out, results);
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

		out.append("## Reproduce\n\n```\nrate-limit-benchmarks/reliability.sh           # full: about an hour\n")
			.append("rate-limit-benchmarks/reliability.sh --quick   # under 10 minutes, for checking\n")
			.append("RELIABILITY_SCENARIOS='restarts soak' rate-limit-benchmarks/reliability.sh --quick   # some ")
			.append("scenarios only\n```\n\n");
		out.append("Needs `redis-server` (7, which also runs the sentinels), `wrk` and a JDK with `jcmd` on the ")
			.append("`PATH`. Logs of every process: `rate-limit-benchmarks/target/reliability/logs/`.\n\n");
		out.append("<details><summary>Every figure as printed</summary>\n\n```\n");
		for (Results results : all.values()) {
			for (Figure figure : results.figures) {
				out.append(figure.printed()).append('\n');
			}
		}
		out.append("```\n\n</details>\n");
		return out.toString();
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
