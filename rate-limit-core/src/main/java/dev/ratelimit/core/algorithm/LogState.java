package dev.ratelimit.core.algorithm;

import java.util.Arrays;

/**
 * The state of a sliding window log: the time and cost of every allowed call still inside the window, oldest first,
 * in a ring that grows on demand (at most one entry per permit of the limit).
 */
public final class LogState {

	private static final int INITIAL_CAPACITY = 4;

	long[] times;

	long[] costs;

	int head;

	int size;

	LogState() {
		this.times = new long[INITIAL_CAPACITY];
		this.costs = new long[INITIAL_CAPACITY];
	}

	/**
	 * Returns the number of entries held, some of which may have left the window.
	 * @return the entries
	 */
	public int size() {
		return this.size;
	}

	long time(int index) {
		return this.times[(this.head + index) % this.times.length];
	}

	long cost(int index) {
		return this.costs[(this.head + index) % this.costs.length];
	}

	void removeFirst() {
		this.head = (this.head + 1) % this.times.length;
		this.size--;
	}

	void add(long time, long cost) {
		if (this.size == this.times.length) {
			long[] newTimes = new long[this.times.length * 2];
			long[] newCosts = new long[this.costs.length * 2];
			for (int i = 0; i < this.size; i++) {
				newTimes[i] = time(i);
				newCosts[i] = cost(i);
			}
			this.times = newTimes;
			this.costs = newCosts;
			this.head = 0;
		}
		int tail = (this.head + this.size) % this.times.length;
		this.times[tail] = time;
		this.costs[tail] = cost;
		this.size++;
	}

	@Override
	public String toString() {
		long[] entries = new long[this.size * 2];
		for (int i = 0; i < this.size; i++) {
			entries[2 * i] = time(i);
			entries[2 * i + 1] = cost(i);
		}
		return "LogState" + Arrays.toString(entries);
	}

}
