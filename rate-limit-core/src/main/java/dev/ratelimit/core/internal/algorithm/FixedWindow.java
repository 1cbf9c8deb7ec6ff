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
			return Outcome.allowed(permits - count - cost, (count + cost == 0) ? 0 : untilEnd);
		}
		return Outcome.rejected(permits - count, untilEnd, untilEnd);
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

}
