package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * The figures and notes of one scenario: each printed as soon as it is known
 * ({@code reliability <name> <value>}) and appended to the scenario's results file, so
 * that what a scenario measured survives it failing or timing out.
 */
final class Figures {

	static final String NOTE = "note";

	private final Path file;

	private final String scenario;

	Figures(Path directory, String scenario) {
		this.file = directory.resolve(scenario + ".tsv");
		this.scenario = scenario;
		try {
			Files.createDirectories(directory);
			Files.deleteIfExists(this.file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	String scenario() {
		return this.scenario;
	}

	/**
	 * Records a measured value against its target.
	 */
	void add(String row, String column, double value, Target target) {
		add(new Figure(this.scenario, row, column, format(value), target.text(), target.judge(value)));
	}

	/**
	 * Records a value without a target.
	 */
	void add(String row, String column, double value) {
		add(row, column, value, Target.NONE);
	}

	/**
	 * Records a value that is not a plain number (such as {@code > 15000} for a wait that
	 * ran out), with its verdict.
	 */
	void add(String row, String column, String value, Target target, Target.Verdict verdict) {
		add(new Figure(this.scenario, row, column, value, target.text(), verdict));
	}

	/**
	 * Records the time something took that the campaign waited for at most {@code limit}:
	 * in ms, or {@code > limit} (a miss) when it did not come.
	 */
	void addWait(String row, String column, OptionalDouble millis, Duration limit, Target target) {
		if (millis.isPresent()) {
			add(row, column, millis.getAsDouble(), target);
		}
		else {
			add(row, column, "> " + limit.toMillis(), target, Target.Verdict.MISSED);
		}
	}

	private void add(Figure figure) {
		System.out.println(figure.printed());
		write(figure.tsv());
	}

	/**
	 * Records a sentence for the report: how the scenario ran, what a figure means, why
	 * something was skipped.
	 */
	void note(String text) {
		System.out.println("# " + this.scenario + ": " + text);
		write(NOTE + "\t" + this.scenario + "\t" + text.replace('\t', ' ').replace('\n', ' '));
	}

	private void write(String line) {
		try {
			Files.writeString(this.file, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Formats a value: whole numbers without decimals, others with up to three
	 * significant decimals.
	 */
	static String format(double value) {
		if (Double.isNaN(value)) {
			return "n/a";
		}
		if (value == Math.rint(value) && Math.abs(value) < 1e15) {
			return Long.toString((long) value);
		}
		double magnitude = Math.abs(value);
		String pattern = (magnitude >= 100) ? "%.0f" : (magnitude >= 10) ? "%.1f" : (magnitude >= 1) ? "%.2f" : "%.3f";
		return String.format(Locale.ROOT, pattern, value);
	}

}
