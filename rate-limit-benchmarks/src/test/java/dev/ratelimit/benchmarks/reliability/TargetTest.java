package dev.ratelimit.benchmarks.reliability;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Targets: at most, at least, exactly, and none, each with the text the report shows.
 */
class TargetTest {

	@Test
	void judgesAValueAgainstItsBounds() {
		assertThat(Target.atMost(150).judge(150)).isEqualTo(Target.Verdict.MET);
		assertThat(Target.atMost(150).judge(151)).isEqualTo(Target.Verdict.MISSED);
		assertThat(Target.atLeast(1000).judge(999)).isEqualTo(Target.Verdict.MISSED);
		assertThat(Target.atLeast(1000).judge(1651)).isEqualTo(Target.Verdict.MET);
		assertThat(Target.exactly(5).judge(5)).isEqualTo(Target.Verdict.MET);
		assertThat(Target.exactly(5).judge(4)).isEqualTo(Target.Verdict.MISSED);
		assertThat(Target.exactly(5).judge(6)).isEqualTo(Target.Verdict.MISSED);
		assertThat(Target.zero().judge(0)).isEqualTo(Target.Verdict.MET);
		assertThat(Target.NONE.judge(42)).isEqualTo(Target.Verdict.NONE);
	}

	@Test
	void writesEachKindAsTheReportShowsIt() {
		assertThat(Target.atMost(150).text()).isEqualTo("≤ 150");
		assertThat(Target.atLeast(1000).text()).isEqualTo("≥ 1000");
		assertThat(Target.exactly(45).text()).isEqualTo("= 45");
		assertThat(Target.zero().text()).isEqualTo("0");
		assertThat(Target.NONE.text()).isEmpty();
	}

}
