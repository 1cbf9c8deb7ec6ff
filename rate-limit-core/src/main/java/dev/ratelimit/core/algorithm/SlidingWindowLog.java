package dev.ratelimit.core.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

/**
 * The exact sliding window: a call is allowed when the permits taken in the last {@code W} microseconds plus its cost
 * stay within the limit. An entry taken at {@code t} leaves the window at {@code t + W}.
 */
public final class SlidingWindowLog implements LimitAlgorithm<LogState> {

	static final SlidingWindowLog INSTANCE = new SlidingWindowLog();

	private SlidingWindowLog() {
	}

	@Override
	public LogState fresh(Limit limit, long now) {
		return new LogState();
	}

	private static long at(LogState state, long now) {
		return (state.size == 0) ? now : Math.max(now, state.time(state.size - 1));
	}

	@Override
	public Outcome evaluate(Limit limit, LogState state, long now, long cost) {
		long window = limit.windowMicros();
		long permits = limit.capacity();
		long at = at(state, now);
		int first = 0;
		while (first < state.size && state.time(first) <= at - window) {
			first++;
		}
		long active = 0;
		for (int i = first; i < state.size; i++) {
			active += state.cost(i);
		}
		long newest = (first < state.size) ? state.time(state.size - 1) : Long.MIN_VALUE;
		long resetBefore = (newest == Long.MIN_VALUE) ? 0 : newest + window - now;
		if (cost > permits) {
			return Outcome.neverAllowed(permits - active, resetBefore);
		}
		if (active + cost <= permits) {
			long reset = (cost > 0) ? at + window - now : resetBefore;
			return Outcome.allowed(permits - active - cost, reset);
		}
		long excess = active + cost - permits;
		long freed = 0;
		int i = first;
		while (freed < excess) {
			freed += state.cost(i);
			i++;
		}
		return Outcome.rejected(permits - active, state.time(i - 1) + window - now, resetBefore);
	}

	@Override
	public @Nullable String apply(Limit limit, LogState state, long now, long cost) {
		long at = at(state, now);
		while (state.size > 0 && state.time(0) <= at - limit.windowMicros()) {
			state.removeFirst();
		}
		if (cost > 0) {
			state.add(at, cost);
		}
		return null;
	}

}
