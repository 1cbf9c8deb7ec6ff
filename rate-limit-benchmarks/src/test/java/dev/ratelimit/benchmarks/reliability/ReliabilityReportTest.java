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
	void tablesAScenarioOfTwoVersionsAsOneLinePerMeasureWithItsValueBeforeAndAfter() throws IOException {
		quietly(() -> {
			Figures integration = new Figures(this.results, "app-integration");
			integration.note("Each case runs twice.");
			integration.add("f1.sample.logins", "before.tries", 50, Target.NONE);
			integration.add("f1.sample.logins", "after.tries", 5, Target.exactly(5));
			integration.add("f1.sample.logins", "before.refused-429", 0, Target.NONE);
			integration.add("f1.sample.logins", "after.refused-429", 45, Target.exactly(45));
			integration.add("f4.sample.kubernetes", "before.admitted", "no start", Target.NONE, Target.Verdict.NONE);
			integration.add("f4.sample.kubernetes", "after.admitted", 4, Target.exactly(3));
		});
		String report = ReliabilityReport.render(ReliabilityReport.read(this.results), Map.of(), "quick", "abc1234",
				300, "", Map.of(), ZonedDateTime.of(2026, 1, 2, 3, 4, 0, 0, ZoneOffset.UTC));
		assertThat(report)
			.contains("| case | measure | before | after | target | verdict |\n|---|---|---:|---:|---|---|\n"
					+ "| `f1.sample.logins` | tries | 50 | 5 | = 5 | met |\n"
					+ "|  | refused-429 | 0 | 45 | = 45 | met |\n"
					+ "| `f4.sample.kubernetes` | admitted | no start | 4 ✗ | = 3 | missed |\n")
			.contains("| [Application integration (issue 32)](#application-integration-issue-32) | ? |  |  | 1 | 1 |")
			.contains("reliability app-integration.f1.sample.logins.after.tries 5\n");
	}

	@Test
	void anUpdateReplacesOnlyTheSectionsItsRunRanAndSaysWhichRunTheyComeFrom() throws IOException {
		Path first = this.results.resolve("first");
		quietly(() -> {
			new Figures(first, "restarts").add("allow", "unplanned-5xx", 0, Target.zero());
			new Figures(first, "soak").add("heap-mb", "growth", 4, Target.atMost(10));
		});
		ZonedDateTime date = ZonedDateTime.of(2026, 1, 2, 3, 4, 0, 0, ZoneOffset.UTC);
		String existing = ReliabilityReport.render(ReliabilityReport.read(first), Map.of(), "full", "abc1234", 3600, "",
				Map.of("cores", "2"), date);
		Path second = this.results.resolve("second");
		quietly(() -> {
			new Figures(second, "soak").add("heap-mb", "growth", 12, Target.atMost(10));
			Figures integration = new Figures(second, "app-integration");
			integration.add("f2.reactive.ipv6", "before.admitted", 6, Target.NONE);
			integration.add("f2.reactive.ipv6", "after.admitted", 2, Target.exactly(2));
		});
		Files.writeString(second.resolve("runs.tsv"), "soak\tcompleted\t70\t1.0\t1.5\n");
		String updated = ReliabilityReport.update(existing, ReliabilityReport.read(second),
				ReliabilityReport.runs(second), "quick", "def5678", 120, "", date.plusDays(1));
		String restarts = existing.substring(existing.indexOf("## Redis killed"), existing.indexOf("## Sentinel"));
		assertThat(updated).startsWith(existing.substring(0, existing.indexOf("## Summary")))
			.contains(restarts)
			.contains("| [Soak](#soak) | completed | 70 s | 1.0 → 1.5 | 0 | 1 |")
			.contains("## Soak\n\n> From a separate quick run, `RELIABILITY_SCENARIOS='soak app-integration' "
					+ "rate-limit-benchmarks/reliability.sh --quick --update`, of commit `def5678`, 2026-01-03 "
					+ "03:04 UTC, 2 min 0 s; the other sections come from the run named at the top.\n\n")
			.contains("| heap-mb | value | target | verdict |\n|---|---:|---|---|\n| growth | 12 ✗ | ≤ 10 | missed |")
			.doesNotContain("| growth | 4 |")
			.contains("| `f2.reactive.ipv6` | admitted | 6 | 2 | = 2 | met |")
			.contains("reliability restarts.allow.unplanned-5xx 0\nreliability soak.heap-mb.growth 12\n"
					+ "reliability app-integration.f2.reactive.ipv6.before.admitted 6\n"
					+ "reliability app-integration.f2.reactive.ipv6.after.admitted 2\n")
			.doesNotContain("reliability soak.heap-mb.growth 4");
		// in the scenarios' order: the new section after the soak's, before the run's
		// details; its summary line after the soak's
		assertThat(updated.indexOf("## Application integration")).isGreaterThan(updated.indexOf("## Soak"))
			.isLessThan(updated.indexOf("## Run and machine"));
		assertThat(updated.indexOf("| [Application integration")).isGreaterThan(updated.indexOf("| [Soak]"))
			.isLessThan(updated.indexOf("## Saturation"));
		assertThat(updated).contains("| cores | 2 |");
		// updating again with the same results changes nothing
		assertThat(ReliabilityReport.update(updated, ReliabilityReport.read(second), ReliabilityReport.runs(second),
				"quick", "def5678", 120, "", date.plusDays(1)))
			.isEqualTo(updated);
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
