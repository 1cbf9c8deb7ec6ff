package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

import static dev.ratelimit.core.internal.algorithm.LimitAlgorithm.ceilDiv;

/**
 * The current window's count plus the previous window's count weighted by the share of
 * the previous window that the sliding window still covers. A call of cost {@code c} at
 * {@code e} microseconds into a window of length {@code W} is allowed when
 * {@code previous * (W - e) + (current + c) * W <= limit * W}: an exact comparison in
 * integers (the limit validates that {@code limit * W} stays below 2<sup>53</sup>).
 */
final class SlidingWindowCounter implements LimitAlgorithm<WindowState> {

	static final SlidingWindowCounter INSTANCE = new SlidingWindowCounter();

	private SlidingWindowCounter() {
	}

	@Override
	public WindowState fresh(Limit limit, long now) {
		return new WindowState(FixedWindow.windowStart(now, limit.windowMicros()), 0, 0);
	}

	/**
	 * Returns the state as seen at {@code now}: rolled forward to the window that holds
	 * {@code now}.
	 */
	private static WindowState roll(Limit limit, WindowState state, long now) {
		long window = limit.windowMicros();
		long start = FixedWindow.windowStart(now, window);
		if (start <= state.start) {
			return state;
		}
		if (start == state.start + window) {
			return new WindowState(start, 0, state.current);
		}
		return new WindowState(start, 0, 0);
	}

	@Override
	public Outcome evaluate(Limit limit, WindowState state, long now, long cost) {
		long window = limit.windowMicros();
		long permits = limit.capacity();
		WindowState seen = roll(limit, state, now);
		long into = Math.min(Math.max(now - seen.start, 0), window - 1);
		long weighted = seen.previous * (window - into);
		long reset = resetAfter(seen, now, window, seen.current + (cost <= permits ? cost : 0));
		if (cost > permits) {
			return Outcome.neverAllowed(remaining(permits, seen.current, weighted, window),
					resetAfter(seen, now, window, seen.current));
		}
		long room = permits - seen.current - cost;
		if (room >= 0 && weighted <= room * window) {
			return Outcome.allowed(remaining(permits, seen.current + cost, weighted, window), reset, seen.start);
		}
		return Outcome.rejected(remaining(permits, seen.current, weighted, window),
				retryAfter(seen, now, window, permits, cost, room), resetAfter(seen, now, window, seen.current));
	}

	private static long remaining(long permits, long current, long weighted, long window) {
		return Math.max(0, permits - current - ceilDiv(weighted, window));
	}

	private static long resetAfter(WindowState seen, long now, long window, long current) {
		if (current > 0) {
			return seen.start + 2 * window - now;
		}
		if (seen.previous > 0) {
			return seen.start + window - now;
		}
		return 0;
	}

	private static long retryAfter(WindowState seen, long now, long window, long permits, long cost, long room) {
		if (room >= 0 && seen.previous > 0) {
			long into = window - (room * window) / seen.previous;
			if (into < window) {
				return seen.start + into - now;
			}
		}
		long next = seen.start + window;
		if (seen.current == 0) {
			return next - now;
		}
		long into = Math.max(0, window - ((permits - cost) * window) / seen.current);
		if (into < window) {
			return next + into - now;
		}
		return next + window - now;
	}

	/**
	 * Keeps the counts under the same window length. Under a new length, the old estimate
	 * at {@code now} (the current count plus the previous one weighted, rounded up), at
	 * most the new limit, becomes the count of the window that holds {@code now}, with no
	 * previous count: what was spent stays spent, and decays as one window's count does.
	 */
	@Override
	public WindowState convert(Limit from, Limit to, WindowState state, long now) {
		long window = from.windowMicros();
		if (window == to.windowMicros()) {
			return state;
		}
		WindowState seen = roll(from, state, now);
		long into = Math.min(Math.max(now - seen.start, 0), window - 1);
		long estimate = seen.current + ceilDiv(seen.previous * (window - into), window);
		return new WindowState(FixedWindow.windowStart(now, to.windowMicros()), Math.min(estimate, to.capacity()), 0);
	}

	/** Rolled forward to {@code now}, neither window counts anything. */
	@Override
	public boolean isUnspent(Limit limit, WindowState state, long now) {
		WindowState seen = roll(limit, state, now);
		return seen.current == 0 && seen.previous == 0;
	}

	/**
	 * The weighted count at {@code now} (the current count plus the previous one
	 * weighted, rounded up, as {@link #convert} carries it), at most the limit; spent
	 * until neither window counts anything.
	 */
	@Override
	public SpentShare spentShare(Limit limit, WindowState state, long now) {
		long window = limit.windowMicros();
		WindowState seen = roll(limit, state, now);
		long into = Math.min(Math.max(now - seen.start, 0), window - 1);
		long estimate = seen.current + ceilDiv(seen.previous * (window - into), window);
		long until = (seen.current > 0) ? seen.start + 2 * window : seen.start + window;
		return new SpentShare(Math.min(estimate, limit.capacity()), limit.capacity(), until);
	}

	/** The window that holds {@code now} counts the permits, the one before nothing. */
	@Override
	public void takeOver(Limit limit, WindowState state, long now, long permits) {
		state.start = roll(limit, state, now).start;
		state.current = permits;
		state.previous = 0;
	}

	@Override
	public @Nullable String apply(Limit limit, WindowState state, long now, long cost) {
		WindowState seen = roll(limit, state, now);
		state.start = seen.start;
		state.previous = seen.previous;
		state.current = seen.current + cost;
		return null;
	}

	/**
	 * Gives back permits counted in the window that starts at {@code mark}: from the
	 * current count while that window lasts, from the previous count in the window after
	 * it (where it still weighs), and from neither later.
	 */
	@Override
	public void refund(Limit limit, WindowState state, long now, long cost, long mark) {
		if (state.start == mark) {
			state.current = Math.max(0, state.current - cost);
		}
		else if (state.start == mark + limit.windowMicros()) {
			state.previous = Math.max(0, state.previous - cost);
		}
	}

}
