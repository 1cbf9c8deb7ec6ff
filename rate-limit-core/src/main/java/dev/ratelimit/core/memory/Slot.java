package dev.ratelimit.core.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.WindowAlignment;
import dev.ratelimit.core.internal.algorithm.BucketState;
import dev.ratelimit.core.internal.algorithm.LimitAlgorithm;
import dev.ratelimit.core.internal.algorithm.Outcome;
import dev.ratelimit.core.internal.algorithm.SpentShare;
import dev.ratelimit.core.internal.algorithm.WindowState;

import org.jspecify.annotations.Nullable;

/**
 * The state of one keyed limit, the limit it was last written under, and the stamp that
 * guards both: even while the state is stable, odd while a writer holds it. A call with
 * another limit of the same algorithm decides on the state converted to its limit
 * ({@link LimitAlgorithm#convert}), and writes the converted state under the lock.
 */
abstract class Slot {

	private static final VarHandle STAMP;

	private static final VarHandle RECORD_BY;

	/**
	 * {@link #recordBy} of a slot that a reset or an eviction discarded: no call puts it
	 * back in the cache.
	 */
	private static final long DISCARDED = Long.MAX_VALUE;

	static {
		try {
			STAMP = MethodHandles.lookup().findVarHandle(Slot.class, "stamp", int.class);
			RECORD_BY = MethodHandles.lookup().findVarHandle(Slot.class, "recordBy", long.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	@SuppressWarnings("unused") // Through STAMP.
	private int stamp;

	/**
	 * When this key should next record a call (which keeps it from expiring), in
	 * microseconds; read racily on every call, and moved on (or set to
	 * {@link #DISCARDED}) atomically.
	 */
	long recordBy;

	/**
	 * The store's time (µs) from which this slot counts as expired: a retention and a
	 * half after the last call recorded. Set before the slot is added to the store, then
	 * moved on by each call recorded.
	 */
	volatile long expiresAt;

	/**
	 * The limit the state was last written under; written under the lock, read under the
	 * stamp (a {@link Limit} is immutable, so a racy read sees a whole one).
	 */
	private Limit limit;

	Slot(Limit limit, long recordBy) {
		this.limit = limit;
		this.recordBy = recordBy;
	}

	/**
	 * Returns the slot of a key seen for the first time at {@code now}, holding its
	 * algorithm's fresh state.
	 */
	static Slot fresh(Limit limit, long now, long recordBy) {
		return switch (limit.algorithm()) {
			case TOKEN_BUCKET, LEAKY_BUCKET ->
				new BucketSlot(limit, Slot.<BucketState>algorithm(limit).fresh(limit, now), recordBy);
			case FIXED_WINDOW, SLIDING_WINDOW_COUNTER ->
				new WindowSlot(limit, Slot.<WindowState>algorithm(limit).fresh(limit, now), recordBy);
			case SLIDING_WINDOW_LOG, CONCURRENCY -> new ObjectSlot(limit, algorithm(limit).fresh(limit, now), recordBy);
		};
	}

	@SuppressWarnings("unchecked")
	static <S> LimitAlgorithm<S> algorithm(Limit limit) {
		return (LimitAlgorithm<S>) LimitAlgorithm.of(limit);
	}

	/**
	 * Returns the limit the state was last written under: the newest limit a call used.
	 * @return the limit
	 */
	final Limit limit() {
		return this.limit;
	}

	/**
	 * Whether the state was last written under this limit, or an equal one: a call with
	 * it needs no conversion.
	 */
	final boolean writtenUnder(Limit limit) {
		Limit own = this.limit;
		return own == limit || own.equals(limit);
	}

	/**
	 * Writes the state converted to {@code limit}, if it was written under another one;
	 * under the lock. A call that finds a changed limit writes the conversion whether it
	 * is allowed or not, as the Redis script does, so that the new parameters count from
	 * the first call that saw them.
	 * @return whether the limit changed (the key's retention may have changed with it)
	 */
	final boolean convert(Limit limit, long now) {
		Limit own = this.limit;
		if (own == limit || own.equals(limit)) {
			return false;
		}
		write(own, limit, now);
		this.limit = limit;
		return true;
	}

	/** Replaces the state by its conversion from {@code from} to {@code to}. */
	abstract void write(Limit from, Limit to, long now);

	/**
	 * Makes the next call record this key, which then keeps it for its new limit's
	 * retention, unless the slot was discarded.
	 */
	final void recordSoon() {
		recordNext(Long.MIN_VALUE);
	}

	/**
	 * Moves {@link #recordBy} on to {@code next}, unless the slot was discarded.
	 * @return whether it was moved on (false: discarded)
	 */
	final boolean recordNext(long next) {
		long seen;
		do {
			seen = (long) RECORD_BY.getVolatile(this);
			if (seen == DISCARDED) {
				return false;
			}
		}
		while (!RECORD_BY.compareAndSet(this, seen, next));
		return true;
	}

	/*
	 * A slot leaves the cache in one of two ways. A reset discards it: a call that found
	 * it before may still decide on it, and its permits are then forgotten with the
	 * state. An eviction retires it: the evictor takes its lock, discards it and never
	 * lets go, so no call can decide on it any more. A call that finds the stamp odd and
	 * the slot discarded looks the key up again.
	 */

	/**
	 * Marks the slot as discarded by a reset: {@link #recordNext} refuses from now on.
	 */
	final void discard() {
		RECORD_BY.setVolatile(this, DISCARDED);
	}

	/**
	 * Discards the slot for an eviction; under the lock, which the caller keeps for ever:
	 * no call decides on this slot after the permits the evictor counted.
	 */
	final void retire() {
		discard();
	}

	final boolean isDiscarded() {
		return (long) RECORD_BY.getVolatile(this) == DISCARDED;
	}

	/**
	 * Whether the state is a few numbers, which a reader racing a writer may read torn
	 * without harm (the stamp tells it to read again), unlike a log or a list of leases.
	 */
	abstract boolean optimistic();

	/**
	 * Decides a call without changing the state, on the state converted to {@code limit};
	 * under the lock, or optimistically if {@link #optimistic()}.
	 */
	abstract Outcome evaluate(Limit limit, long now, long cost);

	/**
	 * Takes the permits of a call {@link #evaluate} allowed at the same {@code now}, from
	 * the state converted to {@code limit} first; under the lock.
	 */
	final @Nullable String apply(Limit limit, long now, long cost) {
		convert(limit, now);
		return take(limit, now, cost);
	}

	/**
	 * Takes the permits of an allowed call from a state written under {@code limit};
	 * under the lock.
	 */
	abstract @Nullable String take(Limit limit, long now, long cost);

	/**
	 * Gives back permits an allowed call took ({@link LimitAlgorithm#refund}); under the
	 * lock. A bucket or window whose state was written under other parameters since keeps
	 * them spent, as the Redis script does; a log gives them back from the entry.
	 */
	abstract void refund(Limit limit, long now, long cost, long mark);

	/** Gives back a lease; under the lock. */
	void release(Limit limit, String leaseId, long now) {
	}

	/** Makes a lease still held expire a lease time from {@code now}; under the lock. */
	void renew(Limit limit, String leaseId, long now) {
	}

	/*
	 * Taking over a counterpart's spent share (LimitAlgorithm.takeOver). A call whose
	 * limit names counterparts reads, holding no lock, whether its own state holds
	 * nothing spent and the counterparts' shares; then, under its own locks, a state that
	 * still holds nothing spent takes the share over. So no call waits for a lock while
	 * it holds one.
	 */

	/**
	 * Returns the state as a call with {@code limit} sees it at {@code now}, converted if
	 * written under another limit: a copy for a bucket or a window, the state itself for
	 * a log. Under the lock, or read optimistically and validated.
	 */
	abstract Object seen(Limit limit, long now);

	/** Replaces the state by a copy that {@link #seen} returned; under the lock. */
	abstract void store(Object state);

	/**
	 * Whether the state, as {@code limit} sees it at {@code now}, holds nothing spent;
	 * under the lock, or on a slot not yet in the store.
	 */
	final boolean isUnspent(Limit limit, long now) {
		return Slot.<Object>algorithm(limit).isUnspent(limit, seen(limit, now), now);
	}

	/**
	 * Counts {@code permits} as spent in a state that holds nothing spent, written under
	 * {@code limit}; under the lock, or on a slot not yet in the store.
	 */
	final void takeOver(Limit limit, long now, long permits) {
		Object state = seen(limit, now);
		Slot.<Object>algorithm(limit).takeOver(limit, state, now, permits);
		store(state);
	}

	/**
	 * Reads whether the state holds nothing spent, without the lock.
	 * @return whether it holds nothing spent, or {@code null} if the slot is discarded
	 * while another holds it
	 */
	@Nullable Boolean peekUnspent(Limit limit, long now) {
		return read(() -> isUnspent(limit, now));
	}

	/**
	 * Reads the state's spent share, without the lock, as one of several limits of the
	 * same algorithm sees it: the one it was written under (or one with the same
	 * parameters), else the first, to which it is converted as a call would convert it.
	 * @param candidates the limits, of the slot's algorithm
	 * @return the share, or {@code null} if the slot is discarded while another holds it
	 */
	@Nullable SpentShare peekShare(List<Limit> candidates, long now) {
		return read(() -> {
			Limit as = pick(candidates);
			return Slot.<Object>algorithm(as).spentShare(as, seen(as, now), now);
		});
	}

	/**
	 * Decides a call of cost 0 on the state as it would be after taking {@code permits}
	 * over, if it holds nothing spent, without changing it (the read of an inspection).
	 * @return the outcome, or {@code null} if the slot is discarded while another holds
	 * it
	 */
	@Nullable Outcome peekTakenOver(Limit limit, long now, long permits) {
		return read(() -> {
			LimitAlgorithm<Object> algorithm = algorithm(limit);
			Object state = seen(limit, now);
			if (algorithm.isUnspent(limit, state, now)) {
				state = copy(limit, state, now);
				algorithm.takeOver(limit, state, now, permits);
			}
			return algorithm.evaluate(limit, state, now, 0);
		});
	}

	/**
	 * Returns which of several limits of the slot's algorithm its state is read as: the
	 * first with the parameters it was written under (what a Redis state's field
	 * {@code v} records), else the first.
	 */
	Limit pick(List<Limit> candidates) {
		Limit own = limit();
		for (Limit candidate : candidates) {
			if (sameParameters(own, candidate)) {
				return candidate;
			}
		}
		return candidates.get(0);
	}

	/**
	 * Whether two limits of one algorithm have the parameters a Redis state records
	 * ({@code limit.params} in the script): capacity, units, and the window's length, or
	 * for a calendar window its zone.
	 */
	static boolean sameParameters(Limit a, Limit b) {
		boolean calendar = a.alignment() == WindowAlignment.CALENDAR;
		return a.capacity() == b.capacity() && a.unitsPerMicro() == b.unitsPerMicro()
				&& a.unitsPerPermit() == b.unitsPerPermit() && a.windowMicros() == b.windowMicros()
				&& a.alignment() == b.alignment() && (!calendar || a.zone().equals(b.zone()));
	}

	/**
	 * Returns a state that {@link #seen} returned, or one that decides alike, that a
	 * caller may change without changing this slot's.
	 */
	abstract Object copy(Limit limit, Object seen, long now);

	/**
	 * Reads under an even stamp, again until the state was stable throughout; a log under
	 * the lock.
	 * @return what the read returned, or {@code null} if the slot is discarded while
	 * another holds it
	 */
	<T> @Nullable T read(Supplier<T> reader) {
		for (int losses = 0;; losses++) {
			int stamp = stamp();
			if ((stamp & 1) == 0) {
				T read = reader.get();
				if (validate(stamp)) {
					return read;
				}
			}
			else if (isDiscarded()) {
				return null;
			}
			contended(losses);
		}
	}

	final int stamp() {
		return (int) STAMP.getAcquire(this);
	}

	/** Whether the state read since {@code stamp} was stable throughout. */
	final boolean validate(int stamp) {
		VarHandle.acquireFence();
		return (int) STAMP.getOpaque(this) == stamp;
	}

	/** Takes the lock if the state is still as read under {@code stamp}. */
	final boolean tryLock(int stamp) {
		return STAMP.compareAndSet(this, stamp, stamp + 1);
	}

	/** Takes the lock if it is free now. */
	final boolean tryLock() {
		int stamp = (int) STAMP.getOpaque(this);
		return (stamp & 1) == 0 && STAMP.compareAndSet(this, stamp, stamp + 1);
	}

	/**
	 * Takes the lock, unless the slot is discarded while another holds it (retired for
	 * good, or discarded by a reset while a call holds it): the caller then looks the key
	 * up again.
	 * @return whether the lock is held
	 */
	final boolean lockUnlessDiscarded() {
		for (int spins = 0; !tryLock(); spins++) {
			if (isDiscarded()) {
				return false;
			}
			backOff(spins);
		}
		return true;
	}

	/**
	 * Evaluates a call of cost 0 without writing the stamp, so that a reader never makes
	 * a writer try again (the state of a log or of leases is read under the lock, which
	 * is free again at once).
	 * @return the outcome, or {@code null} if the slot is discarded while another holds
	 * it
	 */
	@Nullable Outcome peek(Limit limit, long now) {
		for (int losses = 0;; losses++) {
			int stamp = stamp();
			if ((stamp & 1) == 0) {
				Outcome outcome = evaluate(limit, now, 0);
				if (validate(stamp)) {
					return outcome;
				}
			}
			else if (isDiscarded()) {
				return null;
			}
			contended(losses);
		}
	}

	final void unlock() {
		STAMP.setRelease(this, (int) STAMP.getOpaque(this) + 1);
	}

	/**
	 * Spins briefly, then yields: a holder keeps the lock only for a few arithmetic
	 * operations.
	 */
	static void backOff(int spins) {
		if (spins < 100) {
			Thread.onSpinWait();
		}
		else {
			Thread.yield();
		}
	}

	/**
	 * Waits after losing a race for the stamp: spins once, then parks for the shortest
	 * time the OS gives (tens of microseconds). Under contention, letting the winner go
	 * on alone, with the state's cache line in its own core's cache, does several times
	 * more decisions per second than taking turns, which moves the line between cores on
	 * every decision (Resilience4j's limiter backs off the same way).
	 */
	static void contended(int losses) {
		if (losses == 0) {
			Thread.onSpinWait();
		}
		else {
			LockSupport.parkNanos(1);
		}
	}

	/*
	 * The state of buckets and windows is a few numbers held in the slot itself (no
	 * second object per key). The algorithm's math runs on a state object made for the
	 * call, which the JIT keeps in registers.
	 */

	/**
	 * A token or leaky bucket: a level and the time of that level.
	 */
	static final class BucketSlot extends Slot {

		private long level;

		private long updatedAt;

		BucketSlot(Limit limit, BucketState fresh, long recordBy) {
			super(limit, recordBy);
			this.level = fresh.level();
			this.updatedAt = fresh.updatedAt();
		}

		@Override
		boolean optimistic() {
			return true;
		}

		@Override
		Outcome evaluate(Limit limit, long now, long cost) {
			LimitAlgorithm<BucketState> algorithm = algorithm(limit);
			BucketState state = BucketState.of(this.level, this.updatedAt);
			Limit own = limit();
			if (own != limit && !own.equals(limit)) {
				state = algorithm.convert(own, limit, state, now);
			}
			return algorithm.evaluate(limit, state, now, cost);
		}

		@Override
		void write(Limit from, Limit to, long now) {
			BucketState state = Slot.<BucketState>algorithm(to)
				.convert(from, to, BucketState.of(this.level, this.updatedAt), now);
			this.level = state.level();
			this.updatedAt = state.updatedAt();
		}

		@Override
		Object seen(Limit limit, long now) {
			BucketState state = BucketState.of(this.level, this.updatedAt);
			Limit own = limit();
			return (own != limit && !own.equals(limit))
					? Slot.<BucketState>algorithm(limit).convert(own, limit, state, now) : state;
		}

		@Override
		void store(Object state) {
			BucketState bucket = (BucketState) state;
			this.level = bucket.level();
			this.updatedAt = bucket.updatedAt();
		}

		@Override
		Object copy(Limit limit, Object seen, long now) {
			BucketState bucket = (BucketState) seen;
			return BucketState.of(bucket.level(), bucket.updatedAt());
		}

		@Override
		@Nullable String take(Limit limit, long now, long cost) {
			BucketState state = BucketState.of(this.level, this.updatedAt);
			String lease = Slot.<BucketState>algorithm(limit).apply(limit, state, now, cost);
			this.level = state.level();
			this.updatedAt = state.updatedAt();
			return lease;
		}

		@Override
		void refund(Limit limit, long now, long cost, long mark) {
			if (!writtenUnder(limit)) {
				return;
			}
			BucketState state = BucketState.of(this.level, this.updatedAt);
			Slot.<BucketState>algorithm(limit).refund(limit, state, now, cost, mark);
			this.level = state.level();
			this.updatedAt = state.updatedAt();
		}

		/**
		 * The level in units at {@link #updatedAt()}; read optimistically, validate with
		 * the stamp.
		 */
		long level() {
			return this.level;
		}

		long updatedAt() {
			return this.updatedAt;
		}

		/** Replaces the state; under the lock. */
		void set(long level, long updatedAt) {
			this.level = level;
			this.updatedAt = updatedAt;
		}

	}

	/**
	 * A fixed window or sliding window counter: the current window's start and count, and
	 * the previous window's.
	 */
	static final class WindowSlot extends Slot {

		private long start;

		private long current;

		private long previous;

		WindowSlot(Limit limit, WindowState fresh, long recordBy) {
			super(limit, recordBy);
			this.start = fresh.start();
			this.current = fresh.current();
			this.previous = fresh.previous();
		}

		@Override
		boolean optimistic() {
			return true;
		}

		@Override
		Outcome evaluate(Limit limit, long now, long cost) {
			LimitAlgorithm<WindowState> algorithm = algorithm(limit);
			WindowState state = WindowState.of(this.start, this.current, this.previous);
			Limit own = limit();
			if (own != limit && !own.equals(limit)) {
				state = algorithm.convert(own, limit, state, now);
			}
			return algorithm.evaluate(limit, state, now, cost);
		}

		@Override
		void write(Limit from, Limit to, long now) {
			WindowState state = Slot.<WindowState>algorithm(to)
				.convert(from, to, WindowState.of(this.start, this.current, this.previous), now);
			this.start = state.start();
			this.current = state.current();
			this.previous = state.previous();
		}

		@Override
		Object seen(Limit limit, long now) {
			WindowState state = WindowState.of(this.start, this.current, this.previous);
			Limit own = limit();
			return (own != limit && !own.equals(limit))
					? Slot.<WindowState>algorithm(limit).convert(own, limit, state, now) : state;
		}

		@Override
		void store(Object state) {
			WindowState window = (WindowState) state;
			this.start = window.start();
			this.current = window.current();
			this.previous = window.previous();
		}

		@Override
		Object copy(Limit limit, Object seen, long now) {
			WindowState window = (WindowState) seen;
			return WindowState.of(window.start(), window.current(), window.previous());
		}

		@Override
		@Nullable String take(Limit limit, long now, long cost) {
			WindowState state = WindowState.of(this.start, this.current, this.previous);
			String lease = Slot.<WindowState>algorithm(limit).apply(limit, state, now, cost);
			this.start = state.start();
			this.current = state.current();
			this.previous = state.previous();
			return lease;
		}

		@Override
		void refund(Limit limit, long now, long cost, long mark) {
			if (!writtenUnder(limit)) {
				return;
			}
			WindowState state = WindowState.of(this.start, this.current, this.previous);
			Slot.<WindowState>algorithm(limit).refund(limit, state, now, cost, mark);
			this.start = state.start();
			this.current = state.current();
			this.previous = state.previous();
		}

	}

	/**
	 * A sliding window log or a concurrency limit: a state object changed in place, only
	 * under the lock.
	 */
	static final class ObjectSlot extends Slot {

		private final Object state;

		ObjectSlot(Limit limit, Object state, long recordBy) {
			super(limit, recordBy);
			this.state = state;
		}

		@Override
		boolean optimistic() {
			return false;
		}

		// A log keeps its entries and a concurrency limit its leases under new parameters
		// (LimitAlgorithm.convert): there is nothing to convert.
		@Override
		Outcome evaluate(Limit limit, long now, long cost) {
			return algorithm(limit).evaluate(limit, this.state, now, cost);
		}

		@Override
		void write(Limit from, Limit to, long now) {
		}

		@Override
		Object seen(Limit limit, long now) {
			return this.state;
		}

		@Override
		void store(Object state) {
		}

		/**
		 * A fresh state: the only state copied is one that holds nothing spent, which
		 * decides as a fresh one does (its entries have all left the window).
		 */
		@Override
		Object copy(Limit limit, Object seen, long now) {
			return algorithm(limit).fresh(limit, now);
		}

		/** The first: a log records no parameters in Redis. */
		@Override
		Limit pick(List<Limit> candidates) {
			return candidates.get(0);
		}

		@Override
		<T> @Nullable T read(Supplier<T> reader) {
			if (!lockUnlessDiscarded()) {
				return null;
			}
			try {
				return reader.get();
			}
			finally {
				unlock();
			}
		}

		@Override
		@Nullable String take(Limit limit, long now, long cost) {
			return algorithm(limit).apply(limit, this.state, now, cost);
		}

		@Override
		void refund(Limit limit, long now, long cost, long mark) {
			algorithm(limit).refund(limit, this.state, now, cost, mark);
		}

		@Override
		void release(Limit limit, String leaseId, long now) {
			algorithm(limit).release(limit, this.state, leaseId, now);
		}

		@Override
		void renew(Limit limit, String leaseId, long now) {
			algorithm(limit).renew(limit, this.state, leaseId, now);
		}

		@Override
		@Nullable Outcome peek(Limit limit, long now) {
			if (!lockUnlessDiscarded()) {
				return null;
			}
			try {
				return evaluate(limit, now, 0);
			}
			finally {
				unlock();
			}
		}

	}

}
