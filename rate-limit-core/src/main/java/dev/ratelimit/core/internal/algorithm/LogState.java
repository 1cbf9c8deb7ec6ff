package dev.ratelimit.core.internal.algorithm;

import java.util.Arrays;

/**
 * The state of a sliding window log: the allowed calls of the last window, oldest first,
 * one entry per distinct time (calls at the same microsecond share one), in a ring that
 * grows on demand. Each entry holds its time and the running total of the permits taken
 * up to and including it, so that the permits between two entries are one subtraction and
 * the entry where a total is reached is a binary search. At most one entry per permit of
 * the limit.
 */
final class LogState {

	/**
	 * Running totals are held modulo this: a key that never goes idle would otherwise
	 * count up for ever, past what the Redis script's doubles hold exactly. Only
	 * differences of totals within one window are read, and they are at most the limit's
	 * permits, far below it.
	 */
	static final long TOTAL_MODULUS = 1L << 50;

	private static final int INITIAL_CAPACITY = 4;

	long[] times;

	long[] totals;

	int head;

	int size;

	/**
	 * The running total before the oldest entry held: that of the last entry dropped, or
	 * 0.
	 */
	long before;

	/** Entries read so far, for tests that bound the work of a call. */
	long reads;

	LogState() {
		this.times = new long[INITIAL_CAPACITY];
		this.totals = new long[INITIAL_CAPACITY];
	}

	/**
	 * Returns the number of entries held, some of which may have left the window.
	 * @return the entries
	 */
	int size() {
		return this.size;
	}

	/**
	 * Returns the permits taken after the running total {@code from}, up to and including
	 * {@code to}.
	 */
	static long permitsBetween(long from, long to) {
		return Math.floorMod(to - from, TOTAL_MODULUS);
	}

	long time(int index) {
		this.reads++;
		return this.times[(this.head + index) % this.times.length];
	}

	long total(int index) {
		this.reads++;
		return this.totals[(this.head + index) % this.totals.length];
	}

	/** Returns the running total before the entry at {@code index}. */
	long totalBefore(int index) {
		return (index == 0) ? this.before : total(index - 1);
	}

	/**
	 * Returns the index of the first entry taken after {@code time}, or {@link #size} if
	 * none was: a binary search.
	 */
	int firstAfter(long time) {
		int low = 0;
		int high = this.size;
		while (low < high) {
			int middle = (low + high) >>> 1;
			if (time(middle) > time) {
				high = middle;
			}
			else {
				low = middle + 1;
			}
		}
		return low;
	}

	/**
	 * Returns the index of the first entry from {@code from} on whose running total is at
	 * least {@code permits} past {@code base}: a binary search, over at most
	 * {@code permits} entries as each holds at least one permit. Such an entry must
	 * exist.
	 */
	int firstReaching(int from, long base, long permits) {
		int low = from;
		int high = (int) Math.min(this.size - 1L, from + permits - 1);
		while (low < high) {
			int middle = (low + high) >>> 1;
			if (permitsBetween(base, total(middle)) >= permits) {
				high = middle;
			}
			else {
				low = middle + 1;
			}
		}
		return low;
	}

	void removeFirst() {
		this.before = this.totals[this.head];
		this.head = (this.head + 1) % this.times.length;
		this.size--;
	}

	/**
	 * Adds {@code cost} permits at {@code time}, no earlier than the newest entry; merged
	 * into it at the same time.
	 */
	void add(long time, long cost) {
		if (this.size > 0 && time(this.size - 1) == time) {
			int newest = (this.head + this.size - 1) % this.totals.length;
			this.totals[newest] = Math.floorMod(this.totals[newest] + cost, TOTAL_MODULUS);
			return;
		}
		long total = Math.floorMod(totalBefore(this.size) + cost, TOTAL_MODULUS);
		if (this.size == this.times.length) {
			long[] newTimes = new long[this.times.length * 2];
			long[] newTotals = new long[this.totals.length * 2];
			for (int i = 0; i < this.size; i++) {
				newTimes[i] = this.times[(this.head + i) % this.times.length];
				newTotals[i] = this.totals[(this.head + i) % this.totals.length];
			}
			this.times = newTimes;
			this.totals = newTotals;
			this.head = 0;
		}
		int tail = (this.head + this.size) % this.times.length;
		this.times[tail] = time;
		this.totals[tail] = total;
		this.size++;
	}

	/**
	 * Takes up to {@code cost} permits back from the entry at {@code time}, if the log
	 * holds one: its cost falls by as much, as does the running total of every entry
	 * after it, and an entry left with nothing is removed.
	 * @param time the entry's time
	 * @param cost the permits to take back
	 */
	void takeBack(long time, long cost) {
		int found = firstAfter(time) - 1;
		if (found < 0 || time(found) != time) {
			return;
		}
		long own = permitsBetween(totalBefore(found), total(found));
		long back = Math.min(cost, own);
		if (back <= 0) {
			return;
		}
		int length = this.totals.length;
		for (int i = found; i < this.size; i++) {
			int at = (this.head + i) % length;
			this.totals[at] = Math.floorMod(this.totals[at] - back, TOTAL_MODULUS);
		}
		if (own > back) {
			return;
		}
		for (int i = found; i < this.size - 1; i++) {
			int to = (this.head + i) % length;
			int from = (this.head + i + 1) % length;
			this.times[to] = this.times[from];
			this.totals[to] = this.totals[from];
		}
		this.size--;
	}

	@Override
	public String toString() {
		long[] entries = new long[this.size * 2];
		for (int i = 0; i < this.size; i++) {
			entries[2 * i] = this.times[(this.head + i) % this.times.length];
			entries[2 * i + 1] = this.totals[(this.head + i) % this.totals.length];
		}
		return "LogState[before=" + this.before + ", time and running total " + Arrays.toString(entries) + "]";
	}

}
