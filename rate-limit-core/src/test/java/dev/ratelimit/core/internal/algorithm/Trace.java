package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.Limit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives one key of one limit through its algorithm's math with an explicit clock, the
 * way a backend would: evaluate, then apply only if allowed.
 */
final class Trace {

	/**
	 * 2026-01-01T00:00Z: a whole number of days since the epoch, so every common window
	 * starts here.
	 */
	static final long START = 1_767_225_600_000_000L;

	private final Limit limit;

	private final LimitAlgorithm<Object> algorithm;

	private final Object state;

	@SuppressWarnings("unchecked")
	Trace(Limit limit) {
		this.limit = limit;
		this.algorithm = (LimitAlgorithm<Object>) LimitAlgorithm.of(limit);
		this.state = this.algorithm.fresh(limit, START);
	}

	/**
	 * Decides a call at {@code START + atMicros}.
	 */
	Outcome call(long atMicros, long cost) {
		long now = START + atMicros;
		Outcome outcome = this.algorithm.evaluate(this.limit, this.state, now, cost);
		if (outcome.allowed()) {
			this.algorithm.apply(this.limit, this.state, now, cost);
		}
		return outcome;
	}

	/**
	 * Evaluates a call at {@code START + atMicros} without applying it.
	 */
	Outcome peek(long atMicros, long cost) {
		return this.algorithm.evaluate(this.limit, this.state, START + atMicros, cost);
	}

	/**
	 * Runs a table of calls, one per line:
	 * {@code atMicros cost allow|reject|never remaining retryAfterMicros
	 * resetAfterMicros [delayMicros]}; {@code #} starts a comment; times may use
	 * {@code _} as a digit separator.
	 */
	void runTable(String table) {
		int lineNumber = 0;
		for (String raw : table.split("\n")) {
			lineNumber++;
			String line = raw.replaceAll("#.*", "").trim();
			if (line.isEmpty()) {
				continue;
			}
			String[] cells = line.replace("_", "").split("\\s+");
			long at = Long.parseLong(cells[0]);
			long cost = Long.parseLong(cells[1]);
			Outcome outcome = call(at, cost);
			String where = "line " + lineNumber + " [" + line + "] of " + this.limit + ", got " + outcome;
			switch (cells[2]) {
				case "allow" -> assertThat(outcome.allowed()).as(where).isTrue();
				case "reject" -> assertThat(outcome.allowed() || outcome.exceedsCapacity()).as(where).isFalse();
				case "never" -> assertThat(!outcome.allowed() && outcome.exceedsCapacity()).as(where).isTrue();
				default -> throw new IllegalArgumentException("Unknown verdict '" + cells[2] + "' in " + where);
			}
			assertThat(outcome.remaining()).as("remaining, " + where).isEqualTo(Long.parseLong(cells[3]));
			assertThat(outcome.retryAfterMicros()).as("retry-after, " + where).isEqualTo(Long.parseLong(cells[4]));
			assertThat(outcome.resetAfterMicros()).as("reset-after, " + where).isEqualTo(Long.parseLong(cells[5]));
			long delay = (cells.length > 6) ? Long.parseLong(cells[6]) : 0;
			assertThat(outcome.delayMicros()).as("delay, " + where).isEqualTo(delay);
		}
	}

}
