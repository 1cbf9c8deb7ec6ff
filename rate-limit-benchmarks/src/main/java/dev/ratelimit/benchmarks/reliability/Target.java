package dev.ratelimit.benchmarks.reliability;

import java.util.Locale;

/**
 * What a figure should be: at most a limit, or nothing in particular.
 *
 * @param text the target as the report shows it, such as {@code ≤ 150}
 * @param limit the largest value that meets it, or {@code NaN} for no target
 */
record Target(String text, double limit) {

	static final Target NONE = new Target("", Double.NaN);

	static Target zero() {
		return new Target("0", 0);
	}

	static Target atMost(double limit) {
		return new Target("≤ " + Figures.format(limit), limit);
	}

	boolean exists() {
		return !Double.isNaN(this.limit);
	}

	Verdict judge(double value) {
		if (!exists()) {
			return Verdict.NONE;
		}
		return (value <= this.limit) ? Verdict.MET : Verdict.MISSED;
	}

	/**
	 * Whether a figure met its target.
	 */
	enum Verdict {

		MET, MISSED, NONE;

		String label() {
			return (this == NONE) ? "" : name().toLowerCase(Locale.ROOT);
		}

	}

}
