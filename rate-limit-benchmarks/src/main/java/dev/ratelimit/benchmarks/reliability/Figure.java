package dev.ratelimit.benchmarks.reliability;

/**
 * One figure of a scenario: a cell of its table (a case, such as
 * {@code allow.warm.hot-key.c128}, and a measure, such as {@code p99-ms}), with its
 * target and whether it met it. A results file holds one per line, tab-separated.
 *
 * @param scenario the scenario
 * @param row the case
 * @param column the measure, with its unit in the name
 * @param value the value as text: a number, or a word such as {@code skipped}
 * @param target the target as text, empty for none
 * @param verdict whether the value met the target
 */
record Figure(String scenario, String row, String column, String value, String target, Target.Verdict verdict) {

	static final String PREFIX = "figure";

	/**
	 * Returns the line {@code reliability.sh} prints:
	 * {@code reliability <scenario>.<case>.<measure> <value>}.
	 */
	String printed() {
		return "reliability " + this.scenario + "." + this.row + "." + this.column + " " + this.value;
	}

	String tsv() {
		return String.join("\t", PREFIX, this.scenario, this.row, this.column, this.value, this.target,
				this.verdict.name());
	}

	static Figure parse(String line) {
		String[] fields = line.split("\t", -1);
		if (fields.length != 7 || !fields[0].equals(PREFIX)) {
			throw new IllegalArgumentException("Not a figure line: " + line);
		}
		return new Figure(fields[1], fields[2], fields[3], fields[4], fields[5], Target.Verdict.valueOf(fields[6]));
	}

}
