package dev.ratelimit.core.memory;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.algorithm.Outcome;

import org.jspecify.annotations.Nullable;

/**
 * Holds an {@link InMemoryRateLimiter} to its {@code maxKeys}.
 *
 * <p>
 * A background sweep evicts the keys back to fresh, then the keys nearest to fresh. No
 * call waits for a sweep.
 */
final class KeyEvictor {

	/**
	 * The thread that sweeps the stores of every limiter, one sweep at a time; started
	 * when a sweep is due and gone after five idle seconds.
	 */
	static final Executor BACKGROUND = new ThreadPoolExecutor(0, 1, 5, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
			(task) -> {
				Thread thread = new Thread(task, "ratelimit-key-eviction");
				thread.setDaemon(true);
				return thread;
			});

	/** The cost of a key whose state is back to fresh. */
	static final long FRESH = 0;

	/*
	 * How near a key is to fresh is what evicting it would hand back: a cost-0 evaluation
	 * of its state now against a fresh state of its limit, max(0, fresh remaining -
	 * remaining) permits, as a share of the limit's capacity (so keys of different limits
	 * compare fairly). Ties go to the key that would be full soonest. So a client that
	 * spent a share s of a limit gets permits back only if no key held is back to fresh
	 * and at least maxKeys - maxKeys / 16 other keys have spent a share of at least s.
	 */

	/**
	 * The share of the capacity handed back is held in 30 bits above the 32 bits of the
	 * milliseconds until full.
	 */
	private static final double SHARE_SCALE = 1 << 30;

	private static final long MAX_RESET_MILLIS = (1L << 32) - 2;

	private final ConcurrentHashMap<Object, Slot> map;

	private final TimeSource timeSource;

	private final Runnable expireIdle;

	private final BooleanSupplier expiryWanted;

	private final Consumer<Slot> onEvicted;

	private final long maxKeys;

	private final long lowWater;

	private final long ceiling;

	private final ReentrantLock sweeping = new ReentrantLock();

	/**
	 * Where sweeps run: a background thread shared by every limiter, or the caller's
	 * thread in tests.
	 */
	private final Executor sweeper;

	/** Whether a sweep has been handed to the sweeper and not finished. */
	private final AtomicBoolean sweepScheduled = new AtomicBoolean();

	private final AtomicLong evictedFresh = new AtomicLong();

	private final AtomicLong evictedSpent = new AtomicLong();

	private final AtomicLong permitsHandedBack = new AtomicLong();

	/**
	 * Creates the evictor of a store.
	 * @param map the store
	 * @param timeSource the limiter's clock
	 * @param expireIdle drops the keys past their retention, before a sweep
	 * @param expiryWanted whether a key just added should start a sweep for the keys past
	 * their retention alone
	 * @param onEvicted told of each slot evicted, after it left the store
	 * @param maxKeys the bound
	 * @param sweeper where sweeps run
	 */
	KeyEvictor(ConcurrentHashMap<Object, Slot> map, TimeSource timeSource, Runnable expireIdle,
			BooleanSupplier expiryWanted, Consumer<Slot> onEvicted, long maxKeys, Executor sweeper) {
		this.map = map;
		this.timeSource = timeSource;
		this.expireIdle = expireIdle;
		this.expiryWanted = expiryWanted;
		this.onEvicted = onEvicted;
		this.maxKeys = maxKeys;
		this.sweeper = sweeper;
		this.lowWater = maxKeys - maxKeys / 16;
		long slack = Math.max(1, maxKeys / 16);
		this.ceiling = (maxKeys > Long.MAX_VALUE - slack) ? Long.MAX_VALUE : maxKeys + slack;
	}

	/**
	 * Starts a sweep once a call has added a key beyond the bound (or found no room for
	 * one), or when keys past their retention should be dropped, unless one is on its
	 * way; called with no slot lock held, as a sweep takes them.
	 */
	void sweepIfWanted() {
		if ((this.map.mappingCount() > this.maxKeys || this.expiryWanted.getAsBoolean())
				&& this.sweepScheduled.compareAndSet(false, true)) {
			try {
				this.sweeper.execute(this::sweepInTurn);
			}
			catch (RuntimeException ex) {
				// the sweeper refused (shut down): the next key added tries again
				this.sweepScheduled.set(false);
			}
		}
	}

	// Should keys come faster than sweeps free them, the store stops here: a call on a
	// key not held is decided on a
	// fresh state that is not kept (see notAdded). So no call waits for a sweep and
	// memory stays bounded.
	/**
	 * Returns whether a call may add a key: the store is below
	 * {@code maxKeys + maxKeys / 16}.
	 */
	boolean hasRoom() {
		return this.map.mappingCount() < this.ceiling;
	}

	/**
	 * Counts a call on a key that was not added for want of room: the permits it took are
	 * forgotten, as if its key had been evicted at once.
	 * @param permits the permits the call took
	 */
	void notAdded(long permits) {
		if (permits > 0) {
			this.evictedSpent.incrementAndGet();
			this.permitsHandedBack.addAndGet(permits);
		}
	}

	private void sweepInTurn() {
		this.sweeping.lock();
		try {
			sweep();
		}
		finally {
			this.sweeping.unlock();
			// keys added meanwhile start the next sweep, if need be
			this.sweepScheduled.set(false);
		}
	}

	long evictedFresh() {
		return this.evictedFresh.get();
	}

	long evictedSpent() {
		return this.evictedSpent.get();
	}

	long permitsHandedBack() {
		return this.permitsHandedBack.get();
	}

	/*
	 * A sweep evicts each key back to fresh (it carries no information). Should that free
	 * fewer than maxKeys / 16 keys, it evicts the keys nearest to fresh until maxKeys -
	 * maxKeys / 16 are left. It reads every key once (the nearest twice) and frees at
	 * least a sixteenth of the bound: at most 32 key reads per key added. A read is a
	 * cache miss of about 200 ns on a loaded 2-core machine, so a sweep of a million keys
	 * takes a few tenths of a second. Calls go on meanwhile.
	 */
	private void sweep() {
		this.expireIdle.run();
		long held = this.map.mappingCount();
		if (held <= this.maxKeys) {
			return;
		}
		Sweep sweep = new Sweep(this.timeSource.nowMicros());
		long[] costs = new long[(int) Math.min(held, Integer.MAX_VALUE - 8)];
		int candidates = 0;
		long evicted = 0;
		for (Map.Entry<Object, Slot> entry : this.map.entrySet()) {
			Limit limit = entry.getValue().limit();
			long cost = sweep.cost(entry.getValue(), limit);
			if (cost == FRESH) {
				evicted += (evict(entry.getKey(), entry.getValue(), limit, FRESH, sweep) >= 0) ? 1 : 0;
			}
			else if (cost > 0) {
				if (candidates == costs.length) {
					costs = Arrays.copyOf(costs, (int) Math.min(2L * candidates + 16, Integer.MAX_VALUE - 8));
				}
				costs[candidates++] = cost;
			}
		}
		long need = Math.min(held - this.lowWater - evicted, candidates);
		if (need > 0) {
			evictNearestToFresh(costs, candidates, (int) need, sweep);
		}
	}

	/**
	 * Evicts {@code need} keys among the cheapest of the candidates' costs, in a second
	 * pass over the store.
	 */
	private void evictNearestToFresh(long[] costs, int candidates, int need, Sweep sweep) {
		long threshold = select(costs, candidates, need - 1);
		long below = 0;
		for (int i = 0; i < candidates; i++) {
			below += (costs[i] < threshold) ? 1 : 0;
		}
		long ties = need - below;
		int evicted = 0;
		for (Map.Entry<Object, Slot> entry : this.map.entrySet()) {
			if (evicted == need) {
				return;
			}
			Limit limit = entry.getValue().limit();
			long cost = sweep.cost(entry.getValue(), limit);
			if (cost >= 0 && (cost < threshold || (cost == threshold && ties > 0))) {
				long maxCost = (ties > 0) ? threshold : threshold - 1;
				long evictedCost = evict(entry.getKey(), entry.getValue(), limit, maxCost, sweep);
				if (evictedCost >= 0) {
					evicted++;
					ties -= (evictedCost == threshold) ? 1 : 0;
				}
			}
		}
	}

	// A key is evicted under its slot's lock, which the evictor then keeps. A call that
	// decided on the slot before is
	// counted in what the evictor hands back; a call that finds it after looks the key up
	// again (Slot.retire).
	/**
	 * Evicts a slot if, under its lock, evicting it costs at most {@code maxCost}.
	 * @return the cost, or -1 if the slot stays
	 */
	private long evict(Object key, Slot slot, Limit limit, long maxCost, Sweep sweep) {
		if (!slot.lockUnlessDiscarded()) {
			return -1;
		}
		Outcome current = slot.evaluate(limit, sweep.now, 0);
		Outcome fresh = sweep.fresh(limit);
		long cost = cost(limit, current, fresh);
		if (cost > maxCost || slot.isDiscarded()) {
			slot.unlock();
			return -1;
		}
		slot.retire();
		this.map.remove(key, slot);
		this.onEvicted.accept(slot);
		if (cost == FRESH) {
			this.evictedFresh.incrementAndGet();
		}
		else {
			this.evictedSpent.incrementAndGet();
			this.permitsHandedBack.addAndGet(Math.max(0, fresh.remaining() - current.remaining()));
		}
		return cost;
	}

	/**
	 * One sweep's time, and what a cost-0 call on a fresh state of each limit answers
	 * then. Keys mostly share a few limit instances: the last one is checked first, by
	 * identity.
	 */
	private static final class Sweep {

		final long now;

		private final Map<Limit, Outcome> fresh = new HashMap<>();

		private @Nullable Limit last;

		private @Nullable Outcome lastFresh;

		Sweep(long now) {
			this.now = now;
		}

		/**
		 * Returns the cost of evicting a slot, read without its lock, or -1 if the slot
		 * is evicted or reset.
		 */
		long cost(Slot slot, Limit limit) {
			Outcome outcome = slot.peek(limit, this.now);
			return (outcome != null) ? KeyEvictor.cost(limit, outcome, fresh(limit)) : -1;
		}

		Outcome fresh(Limit limit) {
			Outcome outcome = this.lastFresh;
			if (limit != this.last || outcome == null) {
				outcome = this.fresh.computeIfAbsent(limit,
						(key) -> Slot.fresh(key, this.now, this.now).evaluate(key, this.now, 0));
				this.last = limit;
				this.lastFresh = outcome;
			}
			return outcome;
		}

	}

	/**
	 * Returns what evicting a state hands back, as one number that orders keys:
	 * {@link #FRESH} for a state that answers a cost-0 call as a fresh one does (same
	 * remaining, same wait until full); otherwise 1 plus the share of the capacity handed
	 * back in the upper bits and the milliseconds until full in the lower 32.
	 * @param limit the limit
	 * @param current the outcome of a cost-0 call on the state
	 * @param fresh the outcome of a cost-0 call on a fresh state, at the same time
	 * @return the cost
	 */
	static long cost(Limit limit, Outcome current, Outcome fresh) {
		if (current.remaining() == fresh.remaining() && current.resetAfterMicros() == fresh.resetAfterMicros()) {
			return FRESH;
		}
		long handedBack = Math.max(0, fresh.remaining() - current.remaining());
		long share = (long) Math.ceil(Math.min(1.0, (double) handedBack / limit.capacity()) * SHARE_SCALE);
		long untilFull = Math.max(0, current.resetAfterMicros());
		long millis = Math.min(untilFull / 1000 + ((untilFull % 1000 != 0) ? 1 : 0), MAX_RESET_MILLIS);
		return ((share << 32) | millis) + 1;
	}

	/**
	 * Returns the value that would be at index {@code k} of the first {@code count}
	 * values once sorted, reordering them: quickselect with a random pivot and a
	 * three-way partition (many keys share a cost).
	 */
	static long select(long[] values, int count, int k) {
		int low = 0;
		int high = count - 1;
		while (low < high) {
			long pivot = values[ThreadLocalRandom.current().nextInt(low, high + 1)];
			int less = low;
			int scan = low;
			int greater = high;
			while (scan <= greater) {
				if (values[scan] < pivot) {
					swap(values, less++, scan++);
				}
				else if (values[scan] > pivot) {
					swap(values, scan, greater--);
				}
				else {
					scan++;
				}
			}
			if (k < less) {
				high = less - 1;
			}
			else if (k > greater) {
				low = greater + 1;
			}
			else {
				return pivot;
			}
		}
		return values[low];
	}

	private static void swap(long[] values, int i, int j) {
		long value = values[i];
		values[i] = values[j];
		values[j] = value;
	}

}
