package dev.ratelimit.core.internal.algorithm;

import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

/**
 * The exact sliding window: a call is allowed when the permits taken in the last
 * {@code W} microseconds plus its cost stay within the limit. An entry taken at {@code t}
 * leaves the window at {@code t + W}.
 */
final class SlidingWindowLog implements LimitAlgorithm<LogState> {

	/*
	 * The work of a call is bounded, however full the log: with n entries held (n <= the
	 * limit's permits, at most 100,000), evaluate reads O(log n) of them (the first entry
	 * inside the window by binary search on time, the permits inside it as a difference
	 * of running totals, and for a rejection the entry whose leaving frees enough by
	 * binary search on the running total), and apply drops at most TRIM_PER_CALL entries,
	 * then adds or merges one. sliding_window_log.lua does the same on the sorted set,
	 * with O(log n) Redis commands.
	 */

	/**
	 * The most entries that have left the window one allowed call drops. Dropping them
	 * all at once would take one call through every entry of a full log that has just
	 * left the window. The log still holds at most one entry per permit: an allowed call
	 * adds at most one entry and drops at least one if any has left, and when none has,
	 * every entry is inside the window and holds at least one permit.
	 */
	static final int TRIM_PER_CALL = 8;

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
		int first = state.firstAfter(at - window);
		long base = 0;
		long active = 0;
		long resetBefore = 0;
		if (first < state.size) {
			int newest = state.size - 1;
			base = state.totalBefore(first);
			active = LogState.permitsBetween(base, state.total(newest));
			resetBefore = state.time(newest) + window - now;
		}
		// more in the window than the limit after it was lowered: none left
		long left = Math.max(0, permits - active);
		if (cost > permits) {
			return Outcome.neverAllowed(left, resetBefore);
		}
		if (active + cost <= permits) {
			long reset = (cost > 0) ? at + window - now : resetBefore;
			return Outcome.allowed(permits - active - cost, reset, at);
		}
		long excess = active + cost - permits;
		int freeing = state.firstReaching(first, base, excess);
		return Outcome.rejected(left, state.time(freeing) + window - now, resetBefore);
	}

	/** No entry lies in the window. */
	@Override
	public boolean isUnspent(Limit limit, LogState state, long now) {
		return state.firstAfter(at(state, now) - limit.windowMicros()) >= state.size;
	}

	/**
	 * The permits in the window, at most the limit; spent until the newest entry leaves
	 * the window.
	 */
	@Override
	public SpentShare spentShare(Limit limit, LogState state, long now) {
		long window = limit.windowMicros();
		long at = at(state, now);
		int first = state.firstAfter(at - window);
		if (first >= state.size) {
			return new SpentShare(0, limit.capacity(), now);
		}
		int newest = state.size - 1;
		long active = LogState.permitsBetween(state.totalBefore(first), state.total(newest));
		return new SpentShare(Math.min(active, limit.capacity()), limit.capacity(), state.time(newest) + window);
	}

	/**
	 * An entry at {@code now} holds the permits, as an allowed call of that cost would.
	 */
	@Override
	public void takeOver(Limit limit, LogState state, long now, long permits) {
		apply(limit, state, now, permits);
	}

	@Override
	public @Nullable String apply(Limit limit, LogState state, long now, long cost) {
		long at = at(state, now);
		for (int i = 0; i < TRIM_PER_CALL && state.size > 0 && state.time(0) <= at - limit.windowMicros(); i++) {
			state.removeFirst();
		}
		if (cost > 0) {
			state.add(at, cost);
		}
		return null;
	}

	/**
	 * Gives back up to {@code cost} permits of the entry taken at {@code mark}, if the
	 * log still holds it: an entry that has left the window, and been dropped, gives
	 * nothing.
	 */
	@Override
	public void refund(Limit limit, LogState state, long now, long cost, long mark) {
		state.takeBack(mark, cost);
	}

}
