package dev.ratelimit.core.internal.algorithm;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.Objects;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.Rate;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.WindowAlignment;

/**
 * Where the windows of a fixed window aligned to the calendar start: at midnight in the
 * limit's zone, every day, every Monday or on the first of every month. The in-memory
 * backend computes them for every call; the Redis backend sends the script a few of them
 * around the application's time, from which the script picks by Redis's time.
 */
public final class CalendarWindow {

	private static final long WEEK_MICROS = 7 * 86_400_000_000L;

	private CalendarWindow() {
	}

	/**
	 * Returns the start of the window that holds an instant.
	 * @param limit a fixed window aligned to the calendar
	 * @param at the instant, in microseconds since the epoch
	 * @return the window's start, in microseconds since the epoch
	 */
	public static long start(Limit limit, long at) {
		return micros(limit, firstDay(limit, at));
	}

	/**
	 * Returns the end of the window that holds an instant: the start of the next one.
	 * @param limit a fixed window aligned to the calendar
	 * @param at the instant, in microseconds since the epoch
	 * @return the window's end, in microseconds since the epoch
	 */
	public static long end(Limit limit, long at) {
		return micros(limit, firstDay(limit, at).plus(1, unit(limit)));
	}

	/**
	 * Returns the starts of four windows in order: the one before the window that holds
	 * an instant, that window, and the two after it. They bound three whole windows, from
	 * a window before the instant's to the one after it.
	 * @param limit a fixed window aligned to the calendar
	 * @param at the instant, in microseconds since the epoch
	 * @return the four starts, in microseconds since the epoch
	 */
	public static long[] around(Limit limit, long at) {
		LocalDate first = firstDay(limit, at);
		ChronoUnit unit = unit(limit);
		return new long[] { micros(limit, first.minus(1, unit)), micros(limit, first),
				micros(limit, first.plus(1, unit)), micros(limit, first.plus(2, unit)) };
	}

	/**
	 * Returns whether a limit is a fixed window aligned to the calendar.
	 * @param limit the limit
	 * @return whether its windows follow the calendar
	 */
	public static boolean isCalendar(Limit limit) {
		return limit.alignment() == WindowAlignment.CALENDAR;
	}

	/** The first day of the window that holds an instant, in the limit's zone. */
	private static LocalDate firstDay(Limit limit, long at) {
		LocalDate day = LocalDate.ofInstant(TimeSource.instant(at), limit.zone());
		return switch (unit(limit)) {
			case WEEKS -> day.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
			case MONTHS -> day.withDayOfMonth(1);
			default -> day;
		};
	}

	/**
	 * The instant a day starts in the limit's zone: midnight, or the first time after.
	 */
	private static long micros(Limit limit, LocalDate day) {
		Instant start = day.atStartOfDay(limit.zone()).toInstant();
		return start.getEpochSecond() * 1_000_000L + start.getNano() / 1000;
	}

	/** The calendar unit of a window, which Limit checks is one day, week or month. */
	private static ChronoUnit unit(Limit limit) {
		Rate rate = Objects.requireNonNull(limit.rate(), "rate");
		if (rate.months() > 0) {
			return ChronoUnit.MONTHS;
		}
		return (rate.periodMicros() == WEEK_MICROS) ? ChronoUnit.WEEKS : ChronoUnit.DAYS;
	}

}
