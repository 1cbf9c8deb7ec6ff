package dev.ratelimit.core;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A number of permits per period, written {@code N/PERIOD}: {@code 5/1s}, {@code 60/1m},
 * {@code 60/m}, {@code 1/10s}, {@code 100/500ms}. The period is a Spring-style duration
 * ({@code 500ms}, {@code 1s}, {@code 1m}, {@code 1h}, {@code 1d}, {@code 1w} for seven
 * days, also {@code us} and ISO-8601 such as {@code PT1M}) or a bare unit ({@code s},
 * {@code m}, {@code h}, {@code d}, {@code w}). The period is held in whole microseconds.
 * <p>
 * A period in months ({@code 1mo}) has no fixed length: only a fixed window aligned to
 * the calendar takes it ({@link WindowAlignment#CALENDAR}), and counts real month
 * lengths. Its {@link #periodMicros()} is java.time's estimated month
 * ({@link ChronoUnit#MONTHS}), 30.436875 days.
 */
public final class Rate {

	/** The largest integer that a double, and so a Redis Lua number, holds exactly. */
	static final long MAX_EXACT = 1L << 53;

	/** The estimated length of a month, in microseconds: java.time's. */
	private static final long MONTH_MICROS = ChronoUnit.MONTHS.getDuration().getSeconds() * 1_000_000L;

	private static final Pattern SIMPLE_DURATION = Pattern.compile("^([0-9]*)\\s*([a-zA-Z]{1,2})$");

	private final long permits;

	private final long periodMicros;

	/** The period in calendar months, or 0 for a period of fixed length. */
	private final long months;

	private Rate(long permits, long periodMicros, long months) {
		this.permits = permits;
		this.periodMicros = periodMicros;
		this.months = months;
	}

	/**
	 * Returns the rate of {@code permits} per {@code period}.
	 * @param permits the number of permits, at least 1
	 * @param period the period, a positive whole number of microseconds
	 * @return the rate
	 * @throws InvalidLimitException for {@link Limit.Parameter#RATE} if either value is
	 * out of range
	 */
	public static Rate of(long permits, Duration period) {
		String text = permits + "/" + period;
		return new Rate(checkPermits(permits, text), periodMicros(period, text), 0);
	}

	/**
	 * Parses {@code N/PERIOD}.
	 * @param text the rate, such as {@code 5/1s}
	 * @return the rate
	 * @throws InvalidLimitException for {@link Limit.Parameter#RATE}, with a message that
	 * names the text and what would be right
	 */
	public static Rate parse(String text) {
		if (text == null || text.isBlank()) {
			throw invalid(text, "Rate must not be empty; expected N/PERIOD such as 5/1s or 60/1m");
		}
		String trimmed = text.trim();
		int slash = trimmed.indexOf('/');
		if (slash < 0 || slash != trimmed.lastIndexOf('/')) {
			throw invalid(text, "Invalid rate '" + text + "': expected N/PERIOD such as 5/1s, 60/1m or 1/10s");
		}
		String count = trimmed.substring(0, slash).trim();
		String period = trimmed.substring(slash + 1).trim();
		long permits;
		if (!count.matches("[+-]?[0-9]+")) {
			throw invalid(text, "Invalid rate '" + text + "': '" + count + "' is not a whole number of permits");
		}
		try {
			permits = Long.parseLong(count);
		}
		catch (NumberFormatException ex) {
			throw invalid(text, "Invalid rate '" + text + "': " + count + " permits is too large");
		}
		checkPermits(permits, text);
		long months = months(period, text);
		if (months > 0) {
			return new Rate(permits, months * MONTH_MICROS, months);
		}
		return new Rate(permits, periodMicros(parsePeriod(period, text), text), 0);
	}

	/**
	 * Returns the months of a period written {@code Nmo} (or {@code mo}), else 0.
	 */
	private static long months(String period, String text) {
		Matcher matcher = SIMPLE_DURATION.matcher(period);
		if (!matcher.matches() || !matcher.group(2).equalsIgnoreCase("mo")) {
			return 0;
		}
		String amount = matcher.group(1);
		// the longest number of months whose estimated length stays below 2^53 µs
		long most = MAX_EXACT / MONTH_MICROS;
		if (amount.length() > 9 || (!amount.isEmpty() && Long.parseLong(amount) > most)) {
			throw invalid(text, "Invalid rate '" + text + "': the period '" + period + "' is too long");
		}
		long months = amount.isEmpty() ? 1 : Long.parseLong(amount);
		if (months == 0) {
			throw invalid(text, "Invalid rate '" + text + "': the period must be positive (was " + period + ")");
		}
		return months;
	}

	private static InvalidLimitException invalid(@Nullable String text, String message) {
		return new InvalidLimitException(Limit.Parameter.RATE, text, message);
	}

	private static long checkPermits(long permits, String text) {
		if (permits <= 0) {
			throw invalid(text,
					"Invalid rate '" + text + "': the number of permits must be at least 1 (was " + permits + ")");
		}
		if (permits > MAX_EXACT) {
			throw invalid(text, "Invalid rate '" + text + "': the number of permits must be at most " + MAX_EXACT);
		}
		return permits;
	}

	private static Duration parsePeriod(String period, String text) {
		if (period.isEmpty()) {
			throw invalid(text, "Invalid rate '" + text + "': the period is missing; use e.g. 1s");
		}
		if (period.startsWith("P") || period.startsWith("p")) {
			try {
				return Duration.parse(period);
			}
			catch (DateTimeParseException ex) {
				throw invalid(text, "Invalid rate '" + text + "': '" + period + "' is not an ISO-8601 duration");
			}
		}
		Matcher matcher = SIMPLE_DURATION.matcher(period);
		if (!matcher.matches()) {
			throw invalid(text, "Invalid rate '" + text + "': '" + period
					+ "' is not a period; use an amount and a unit such as 500ms, 1s, 10s, 1m, 1h or 1d");
		}
		long amount;
		try {
			amount = matcher.group(1).isEmpty() ? 1 : Long.parseLong(matcher.group(1));
		}
		catch (NumberFormatException ex) {
			throw invalid(text, "Invalid rate '" + text + "': the period '" + period + "' is too long");
		}
		String unit = matcher.group(2).toLowerCase(Locale.ROOT);
		try {
			return switch (unit) {
				case "ns" -> Duration.ofNanos(amount);
				case "us" -> Duration.ofNanos(Math.multiplyExact(amount, 1000L));
				case "ms" -> Duration.ofMillis(amount);
				case "s" -> Duration.ofSeconds(amount);
				case "m" -> Duration.ofMinutes(amount);
				case "h" -> Duration.ofHours(amount);
				case "d" -> Duration.ofDays(amount);
				case "w" -> Duration.ofDays(Math.multiplyExact(amount, 7L));
				default -> throw invalid(text, "Invalid rate '" + text + "': unknown unit '" + matcher.group(2)
						+ "'; use ns, us, ms, s, m, h, d, w or mo");
			};
		}
		catch (ArithmeticException ex) {
			throw invalid(text, "Invalid rate '" + text + "': the period '" + period + "' is too long");
		}
	}

	private static long periodMicros(Duration period, String text) {
		if (period.isNegative() || period.isZero()) {
			throw invalid(text, "Invalid rate '" + text + "': the period must be positive (was " + period + ")");
		}
		long micros;
		try {
			micros = Math.multiplyExact(period.getSeconds(), 1_000_000L) + period.getNano() / 1000;
		}
		catch (ArithmeticException ex) {
			throw invalid(text, "Invalid rate '" + text + "': the period " + period + " is too long");
		}
		if (period.getNano() % 1000 != 0) {
			throw invalid(text, "Invalid rate '" + text + "': the period must be a whole number of microseconds");
		}
		if (micros > MAX_EXACT) {
			throw invalid(text, "Invalid rate '" + text + "': the period " + period + " is too long");
		}
		return micros;
	}

	/**
	 * Returns the number of permits per period.
	 * @return the permits, at least 1
	 */
	public long permits() {
		return this.permits;
	}

	/**
	 * Returns the period; for a period in months, their estimated length (see
	 * {@link #months()}).
	 * @return the period
	 */
	public Duration period() {
		return Duration.ofNanos(this.periodMicros * 1000);
	}

	/**
	 * Returns the period in microseconds; for a period in months, their estimated length
	 * (see {@link #months()}).
	 * @return the period, at least 1
	 */
	public long periodMicros() {
		return this.periodMicros;
	}

	/**
	 * Returns the period in calendar months, for a rate written with {@code mo} such as
	 * {@code 100000/1mo}; such a period has no fixed length, and only a fixed window
	 * aligned to the calendar takes it. A period of fixed length returns 0.
	 * @return the months, or 0
	 */
	public long months() {
		return this.months;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof Rate rate && rate.permits == this.permits && rate.periodMicros == this.periodMicros
				&& rate.months == this.months;
	}

	@Override
	public int hashCode() {
		return (Long.hashCode(this.permits) * 31 + Long.hashCode(this.periodMicros)) * 31 + Long.hashCode(this.months);
	}

	/**
	 * Returns the rate as {@code N/PERIOD} with the largest unit that divides the period,
	 * such as {@code 5/1s} ({@code 1w} is written {@code 7d}), or in months, such as
	 * {@code 100000/1mo}.
	 */
	@Override
	public String toString() {
		if (this.months > 0) {
			return this.permits + "/" + this.months + "mo";
		}
		return this.permits + "/" + formatMicros(this.periodMicros);
	}

	static String formatMicros(long micros) {
		long[] sizes = { 86_400_000_000L, 3_600_000_000L, 60_000_000L, 1_000_000L, 1000L, 1L };
		String[] units = { "d", "h", "m", "s", "ms", "us" };
		for (int i = 0; i < sizes.length; i++) {
			if (micros % sizes[i] == 0) {
				return (micros / sizes[i]) + units[i];
			}
		}
		return micros + "us";
	}

}
