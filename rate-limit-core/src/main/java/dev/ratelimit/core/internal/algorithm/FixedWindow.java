package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

/**
 * A counter per window; windows are aligned to the epoch, so every instance and every
 * backend agrees on where a window starts. Up to twice the limit can pass across a window
 * boundary.
 */
final class FixedWindow implements LimitAlgorithm<WindowState> {

	static final FixedWindow INSTANCE = new FixedWindow();

	private FixedWindow() {
	}

	static long windowStart(long now, long window) {
		return now - Math.floorMod(now, window);
	}

	@Override
	public WindowState fresh(Limit limit, long now) {
		return new WindowState(windowStart(now, limit.windowMicros()), 0, 0);
	}

	@Override
	public Outcome evaluate(Limit limit, WindowState state, long now, long cost) {
		long window = limit.windowMicros();
		long start = Math.max(windowStart(now, window), state.start);
		long count = (start == state.start) ? state.current : 0;
		long untilEnd = start + window - now;
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
		long start = Math.max(windowStart(now, limit.windowMicros()), state.start);
		if (start != state.start) {
			state.start = start;
			state.current = 0;
		}
		state.current += cost;
		return null;
	}

}
