package dev.ratelimit.benchmarks.reliability;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The report from the results files: one table per scenario with its targets and
 * verdicts, the summary, the printed lines.
 */
class ReliabilityReportTest {

	@TempDir
	Path results;

	@Test
	void tablesEachScenarioWithItsTargetsAndMarksTheMisses() throws IOException {
		String printed = quietly(() -> {
			Figures restarts = new Figures(this.results, "restarts");
			restarts.note("3 restarts per mode.");
			restarts.add("allow", "unplanned-5xx", 0, Target.zero());
			restarts.add("allow", "recovery-max-ms", 11020.4, Target.atMost(1000));
			restarts.add("allow", "requests", 12345);
			restarts.add("deny", "unplanned-5xx", 0, Target.zero());
			restarts.add("deny", "recovery-max-ms", "> 15000", Target.atMost(1000), Target.Verdict.MISSED);
			restarts.add("local", "unplanned-5xx", 0, Target.zero());
			restarts.add("local", "recovery-max-ms", 900, Target.atMost(1000));
		});
		assertThat(printed).contains("reliability restarts.allow.recovery-max-ms 11020\n")
			.contains("reliability restarts.deny.recovery-max-ms > 15000\n");
		Files.writeString(this.results.resolve("runs.tsv"), "restarts\tcompleted\t187\t1.5\t2.5\n");
		String report = ReliabilityReport.render(ReliabilityReport.read(this.results),
				ReliabilityReport.runs(this.results), "quick", "abc1234", 300, "The \"before\" figures.",
				Map.of("cores", "2"), ZonedDateTime.of(2026, 1, 2, 3, 4, 0, 0, ZoneOffset.UTC));
		assertThat(report)
			.contains("> **Quick run** (`rate-limit-benchmarks/reliability.sh --quick`) of commit "
					+ "`abc1234`, 2026-01-02 03:04 UTC, 5 min 0 s.")
			.contains("The \"before\" figures.")
			.contains("| case | unplanned-5xx | recovery-max-ms | requests | verdict |")
			.contains("| *target* | 0 | ≤ 1000 |  | |")
			.contains("| allow | 0 | 11020 ✗ | 12345 | missed |")
			.contains("| deny | 0 | > 15000 ✗ |  | missed |")
			.contains("| local | 0 | 900 |  | met |")
			.contains("- 3 restarts per mode.")
			.contains("| [Redis killed and restarted under load](#redis-killed-and-restarted-under-load) | completed "
					+ "| 187 s | 1.5 → 2.5 | 1 | 2 |")
			.contains("| [Saturation](#saturation) | not run |")
			.contains("| cores | 2 |");
	}

	@Test
	void listsTheMeasuresOfAScenarioWithOneCaseEachWithItsTarget() throws IOException {
		quietly(() -> {
			Figures flood = new Figures(this.results, "key-flood");
			flood.add("flood", "keys-held", 100000, Target.atMost(100000));
			flood.add("flood", "handed-back", 5964, Target.zero());
			flood.add("flood", "normal-p99-us", 8.83);
		});
		String report = ReliabilityReport.render(ReliabilityReport.read(this.results), Map.of(), "full", "abc1234",
				3600, "", Map.of(), ZonedDateTime.of(2026, 1, 2, 3, 4, 0, 0, ZoneOffset.UTC));
		assertThat(report).contains("| flood | value | target | verdict |\n|---|---:|---|---|\n"
				+ "| keys-held | 100000 | ≤ 100000 | met |\n| handed-back | 5964 ✗ | 0 | missed |\n"
				+ "| normal-p99-us | 8.83 |  |  |\n");
	}

	@Test
	void showsEachCasesTargetInItsCellWhenTheTargetsOfAColumnDiffer() throws IOException {
		quietly(() -> {
			Figures soak = new Figures(this.results, "soak");
			soak.add("heap-mb", "growth", 4, Target.atMost(10));
			soak.add("threads", "growth", 3, Target.atMost(2));
		});
		String report = ReliabilityReport.render(ReliabilityReport.read(this.results), Map.of(), "full", "abc1234",
				3600, "", Map.of(), ZonedDateTime.of(2026, 1, 2, 3, 4, 0, 0, ZoneOffset.UTC));
		assertThat(report)
			.contains("| *target* |  | |\n| heap-mb | 4 (≤ 10) | met |\n| threads | 3 (≤ 2) ✗ | missed |");
	}

	@Test
	void formatsWholeNumbersWithoutDecimalsAndOthersToThreeFigures() {
		assertThat(Figures.format(12)).isEqualTo("12");
		assertThat(Figures.format(1234.56)).isEqualTo("1235");
		assertThat(Figures.format(12.345)).isEqualTo("12.3");
		assertThat(Figures.format(1.2345)).isEqualTo("1.23");
		assertThat(Figures.format(0.01234)).isEqualTo("0.012");
		assertThat(Figures.format(Double.NaN)).isEqualTo("n/a");
	}

	private static String quietly(Runnable task) {
		PrintStream out = System.out;
		ByteArrayOutputStream captured = new ByteArrayOutputStream();
		System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
		try {
			task.run();
		}
		finally {
			System.setOut(out);
		}
		return captured.toString(StandardCharsets.UTF_8);
	}

}
