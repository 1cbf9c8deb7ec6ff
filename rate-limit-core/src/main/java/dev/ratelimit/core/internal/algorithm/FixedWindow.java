package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

/**
 * A counter per window; windows are aligned to the epoch, or to the calendar in the
 * limit's zone ({@link CalendarWindow}), so every instance and every backend agrees on
 * where a window starts. Up to twice the limit can pass across a window boundary.
 */
final class FixedWindow implements LimitAlgorithm<WindowState> {

	static final FixedWindow INSTANCE = new FixedWindow();

	private FixedWindow() {
	}

	static long windowStart(long now, long window) {
		return now - Math.floorMod(now, window);
	}

	/** The start of the limit's window that holds {@code at}. */
	static long startOf(Limit limit, long at) {
		return CalendarWindow.isCalendar(limit) ? CalendarWindow.start(limit, at)
				: windowStart(at, limit.windowMicros());
	}

	/** The end of the limit's window that starts at {@code start}. */
	static long endOf(Limit limit, long start) {
		return CalendarWindow.isCalendar(limit) ? CalendarWindow.end(limit, start) : start + limit.windowMicros();
	}

	@Override
	public WindowState fresh(Limit limit, long now) {
		return new WindowState(startOf(limit, now), 0, 0);
	}

	@Override
	public Outcome evaluate(Limit limit, WindowState state, long now, long cost) {
		long start = Math.max(startOf(limit, now), state.start);
		long count = (start == state.start) ? state.current : 0;
		long untilEnd = endOf(limit, start) - now;
		long permits = limit.capacity();
		if (cost > permits) {
			return Outcome.neverAllowed(permits - count, (count == 0) ? 0 : untilEnd);
		}
		if (count + cost <= permits) {
			return Outcome.allowed(permits - count - cost, (count + cost == 0) ? 0 : untilEnd, start);
		}
		return Outcome.rejected(permits - count, untilEnd, untilEnd);
	}

	/**
	 * Keeps the count, at most the new limit, while the window it was counted in lasts:
	 * under other windows it is the count of the window that holds {@code now}. Under the
	 * same windows a window ends where it does; under others where the old length says (a
	 * calendar window's nominal length), as the script, which knows no zones, decides.
	 */
	@Override
	public WindowState convert(Limit from, Limit to, WindowState state, long now) {
		boolean same = sameWindows(from, to);
		if (same && from.capacity() == to.capacity()) {
			return state;
		}
		boolean ended = same ? now >= endOf(to, state.start) : now >= state.start + from.windowMicros();
		if (ended) {
			return fresh(to, now);
		}
		long start = same ? state.start : startOf(to, now);
		return new WindowState(start, Math.min(state.current, to.capacity()), 0);
	}

	private static boolean sameWindows(Limit from, Limit to) {
		return from.windowMicros() == to.windowMicros() && from.alignment() == to.alignment()
				&& (!CalendarWindow.isCalendar(from) || from.zone().equals(to.zone()));
	}

	/** The window that holds {@code now} counts nothing. */
	@Override
	public boolean isUnspent(Limit limit, WindowState state, long now) {
		long start = Math.max(startOf(limit, now), state.start);
		return start != state.start || state.current == 0;
	}

	/**
	 * The count of the window that holds {@code now}, at most the limit; spent until that
	 * window ends.
	 */
	@Override
	public SpentShare spentShare(Limit limit, WindowState state, long now) {
		long start = Math.max(startOf(limit, now), state.start);
		if (start != state.start || state.current == 0) {
			return new SpentShare(0, limit.capacity(), now);
		}
		return new SpentShare(Math.min(state.current, limit.capacity()), limit.capacity(), endOf(limit, start));
	}

	/** The window that holds {@code now} counts the permits. */
	@Override
	public void takeOver(Limit limit, WindowState state, long now, long permits) {
		state.start = Math.max(startOf(limit, now), state.start);
		state.current = permits;
	}

	@Override
	public @Nullable String apply(Limit limit, WindowState state, long now, long cost) {
		long start = Math.max(startOf(limit, now), state.start);
		if (start != state.start) {
			state.start = start;
			state.current = 0;
		}
		state.current += cost;
		return null;
	}

	/**
	 * Gives back permits taken in the window that starts at {@code mark}, if it is still
	 * the current one: a window that has ended keeps its count.
	 */
	@Override
	public void refund(Limit limit, WindowState state, long now, long cost, long mark) {
		if (state.start == mark) {
			state.current = Math.max(0, state.current - cost);
		}
	}

}
