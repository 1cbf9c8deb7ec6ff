package dev.ratelimit.core;

import java.util.Locale;

/**
 * Where the windows of a fixed-window limit start.
 */
public enum WindowAlignment {

	/**
	 * Windows of the rate's fixed length, counted from the Unix epoch
	 * (1970-01-01T00:00Z), so that every instance and backend agrees on them: a
	 * {@code 1d} window starts at midnight UTC, a {@code 1w} window on a Thursday. The
	 * default.
	 */
	EPOCH,

	/**
	 * Windows of a calendar day ({@code 1d}), week ({@code 1w}, from Monday) or month
	 * ({@code 1mo}), starting at midnight in the limit's {@link Limit#zone() zone}. Their
	 * length follows the calendar: a month has 28 to 31 days, and a day on which daylight
	 * saving time begins or ends has 23 or 25 hours.
	 */
	CALENDAR;

	/**
	 * Returns the alignment with the given configuration name ({@code epoch} or
	 * {@code calendar}), ignoring case.
	 * @param name the name
	 * @return the alignment
	 * @throws InvalidLimitException for {@link Limit.Parameter#ALIGN} if no alignment has
	 * that name
	 */
	public static WindowAlignment fromConfigName(String name) {
		String wanted = name.trim().toUpperCase(Locale.ROOT);
		for (WindowAlignment alignment : values()) {
			if (alignment.name().equals(wanted)) {
				return alignment;
			}
		}
		throw new InvalidLimitException(Limit.Parameter.ALIGN, name,
				"Unknown window alignment '" + name + "'; expected epoch or calendar");
	}

	@Override
	public String toString() {
		return name().toLowerCase(Locale.ROOT);
	}

}
