package dev.ratelimit.benchmarks.reliability;

import java.util.Locale;

/**
 * What a figure should be: within bounds (at most a limit, at least one, or exactly a
 * value), or nothing in particular.
 *
 * @param text the target as the report shows it, such as {@code ≤ 150}
 * @param least the smallest value that meets it ({@code -∞} for none)
 * @param most the largest value that meets it ({@code +∞} for none)
 */
record Target(String text, double least, double most) {

	static final Target NONE = new Target("", Double.NaN, Double.NaN);

	static Target zero() {
		return exactly(0);
	}

	static Target atMost(double limit) {
		return new Target("≤ " + Figures.format(limit), Double.NEGATIVE_INFINITY, limit);
	}

	static Target atLeast(double limit) {
		return new Target("≥ " + Figures.format(limit), limit, Double.POSITIVE_INFINITY);
	}

	/** Exactly a value; 0 is written as it is, others as {@code = 5}. */
	static Target exactly(double value) {
		return new Target((value == 0) ? "0" : "= " + Figures.format(value), value, value);
	}

	boolean exists() {
		return !Double.isNaN(this.least);
	}

	Verdict judge(double value) {
		if (!exists()) {
			return Verdict.NONE;
		}
		return (value >= this.least && value <= this.most) ? Verdict.MET : Verdict.MISSED;
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
