package dev.ratelimit.core.memory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Lease;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.algorithm.Outcome;
import dev.ratelimit.core.algorithm.TokenBucket;

import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} that keeps every key's state in this JVM.
 *
 * <p>
 * State lives in a bounded Caffeine cache: at most {@code maxKeys} keyed limits are held, the least valuable evicted
 * first (Caffeine's size policy favours keys in recent, frequent use), and each is dropped once it has been idle for
 * its limit's {@link dev.ratelimit.core.Limit#retentionMicros() retention} (and at most half as long again), after
 * which its state would be indistinguishable from a fresh one.
 *
 * <p>
 * Each keyed limit has its own version stamp, which is also its lock: no global lock. A call with one limit whose
 * state is a few numbers (token and leaky buckets, fixed and sliding windows) reads the state optimistically and
 * commits with one compare-and-set of the stamp, so a rejected call writes nothing at all; other calls hold the locks
 * of all their limits at once (taking all or none, so without deadlock), so that all their limits are decided
 * together.
 *
 * <p>
 * The hot path reads the cache without Caffeine's bookkeeping. Caffeine still sees every key's creation and, for a key
 * in use, a sample of its calls: at least one each half retention (which is why a key may be kept up to half a
 * retention longer) and about one call in {@value #RECORD_ONE_IN}, so that its size policy still knows which keys are
 * hot.
 *
 * <p>
 * The key last shown to Caffeine is also held beside it, with its slot and the cache time until which Caffeine would
 * return that slot: a call made with that very {@link KeyedLimit} instance finds its slot there, without the look-up
 * (about 6 ns of a 40 to 50 ns decision). It is written only when a call is shown to Caffeine, so threads calling many
 * keys do not contend on it, and cleared when Caffeine evicts that slot and by {@link #reset}.
 */
public final class InMemoryRateLimiter implements RateLimiter {

	/** The default bound on tracked keys. */
	public static final long DEFAULT_MAX_KEYS = 1_000_000;

	/** About one call in this many is shown to Caffeine's size policy. */
	static final int RECORD_ONE_IN = 1024;

	private final Cache<KeyedLimit, Slot> slots;

	private final Policy<KeyedLimit, Slot> policy;

	private final Policy.VarExpiration<KeyedLimit, Slot> expiration;

	private final TimeSource timeSource;

	/**
	 * Caffeine's clock, in microseconds: the latest time this limiter has shown it, advanced before every call that
	 * lets Caffeine record, expire or evict, so that the hot path reads the time source only once.
	 */
	private final AtomicLong cacheTime;

	/** The key last shown to Caffeine, as {@link #recordSometimes} left it; see the class description. */
	private volatile @Nullable Recent recent;

	private InMemoryRateLimiter(Builder builder) {
		this.timeSource = builder.timeSource;
		this.cacheTime = new AtomicLong(this.timeSource.nowMicros());
		this.slots = Caffeine.newBuilder()
			.maximumSize(builder.maxKeys)
			.expireAfter(new RetentionExpiry())
			.ticker(() -> this.cacheTime.get() * 1000)
			.executor(Runnable::run)
			.evictionListener(this::forgetRecent)
			.build();
		this.policy = this.slots.policy();
		this.expiration = this.policy.expireVariably().orElseThrow();
	}

	/**
	 * Starts a limiter with the system time source and {@link #DEFAULT_MAX_KEYS}.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public Decision acquire(List<KeyedLimit> limits, long cost) {
		checkCost(cost);
		int count = limits.size();
		if (count == 0) {
			return Decision.unlimited();
		}
		if (count == 1) {
			return acquireOne(limits.get(0), cost);
		}
		Slot[] held = new Slot[count];
		for (int i = 0; i < count; i++) {
			held[i] = slot(limits.get(i));
		}
		Slot[] distinct = distinct(held);
		lockAll(distinct);
		long now;
		Decision decision;
		try {
			now = this.timeSource.nowMicros();
			decision = decideLocked(limits, held, cost, now);
		}
		finally {
			for (Slot slot : distinct) {
				slot.unlock();
			}
		}
		for (int i = 0; i < count; i++) {
			recordSometimes(held[i], limits.get(i), now);
		}
		return decision;
	}

	private static Slot[] distinct(Slot[] held) {
		Slot[] distinct = new Slot[held.length];
		int count = 0;
		for (int i = 0; i < held.length; i++) {
			if (firstOccurrence(held, i)) {
				distinct[count++] = held[i];
			}
		}
		return (count == held.length) ? distinct : Arrays.copyOf(distinct, count);
	}

	/**
	 * Takes the locks of all the slots of a call, or none: a slot held by another call makes this one let go of what
	 * it holds and try again, so that two calls never wait for each other (no lock order needed, no deadlock).
	 */
	private static void lockAll(Slot[] slots) {
		for (int spins = 0;; spins++) {
			int locked = 0;
			while (locked < slots.length && slots[locked].tryLock()) {
				locked++;
			}
			if (locked == slots.length) {
				return;
			}
			while (locked > 0) {
				slots[--locked].unlock();
			}
			Slot.backOff(spins);
		}
	}

	@Override
	public Decision acquire(KeyedLimit limit) {
		return acquireOne(limit, 1);
	}

	@Override
	public Decision acquire(KeyedLimit limit, long cost) {
		checkCost(cost);
		return acquireOne(limit, cost);
	}

	/**
	 * Decides a call against one limit and, if allowed, takes {@code cost} permits, as {@link #acquire(KeyedLimit,
	 * long)} does, but answers only whether the call may proceed: the same decision without building a
	 * {@link Decision}, for callers that need no headers.
	 * @param limit the keyed limit, of any algorithm but {@link Algorithm#CONCURRENCY} (whose permits must be
	 * released through a decision) and a leaky bucket in mode {@link LeakMode#SHAPE} (whose calls must wait their
	 * delay)
	 * @param cost the permits the call takes, at least 0
	 * @return whether the call is allowed
	 * @throws IllegalArgumentException if the cost is negative, or the limit is a concurrency limit or a shaping
	 * leaky bucket
	 */
	public boolean tryAcquire(KeyedLimit limit, long cost) {
		checkCost(cost);
		Algorithm algorithm = limit.limit().algorithm();
		if (algorithm != Algorithm.TOKEN_BUCKET) {
			checkTryable(limit);
		}
		Slot slot = slot(limit);
		if (slot instanceof Slot.BucketSlot bucket && algorithm == Algorithm.TOKEN_BUCKET) {
			return tryTakeTokens(bucket, limit, cost);
		}
		Outcome outcome = slot.optimistic() ? decideOptimistically(slot, limit, cost)
				: decideLockedOne(slot, limit, cost).outcome;
		return outcome.allowed();
	}

	private static void checkTryable(KeyedLimit limit) {
		if (limit.limit().algorithm() == Algorithm.CONCURRENCY) {
			throw new IllegalArgumentException("tryAcquire cannot hand out the lease of concurrency limit '"
					+ limit.policy() + "'; use acquire and release the decision");
		}
		if (limit.limit().mode() == LeakMode.SHAPE) {
			// true would tell the caller to go now, while the bucket counts the call as waiting its turn.
			throw new IllegalArgumentException("tryAcquire cannot tell the delay of shaping leaky-bucket limit '"
					+ limit.policy() + "'; use acquire and wait the decision's delay");
		}
	}

	/**
	 * {@link #decideOptimistically} for a token bucket whose caller needs only the verdict: one refill, no division
	 * (remaining, retry-after and reset-after are not computed), and the state written straight into the slot. The
	 * level is computed from values read under an even stamp; an allowed call commits by moving that very stamp, so
	 * it replaces exactly the state it computed from.
	 */
	private boolean tryTakeTokens(Slot.BucketSlot slot, KeyedLimit target, long cost) {
		Limit limit = target.limit();
		boolean fits = cost <= limit.capacity();
		long need = cost * limit.unitsPerPermit();
		for (int losses = 0;; losses++) {
			int stamp = slot.stamp();
			if ((stamp & 1) == 0) {
				long now = this.timeSource.nowMicros();
				long updatedAt = slot.updatedAt();
				long at = Math.max(now, updatedAt);
				long level = TokenBucket.levelAt(limit, slot.level(), updatedAt, at);
				if (!fits || need > level) {
					if (slot.validate(stamp)) {
						recordSometimes(slot, target, now);
						return false;
					}
				}
				else if (slot.tryLock(stamp)) {
					slot.set(level - need, at);
					slot.unlock();
					recordSometimes(slot, target, now);
					return true;
				}
			}
			Slot.contended(losses);
		}
	}

	private static void checkCost(long cost) {
		if (cost < 0) {
			throw new IllegalArgumentException("cost must be at least 0 (was " + cost + ")");
		}
	}

	private Decision acquireOne(KeyedLimit target, long cost) {
		Slot slot = slot(target);
		Decision decision;
		if (slot.optimistic()) {
			Outcome outcome = decideOptimistically(slot, target, cost);
			decision = Decision.of(LimitStatus.of(target, outcome));
		}
		else {
			Locked locked = decideLockedOne(slot, target, cost);
			LimitStatus status = LimitStatus.of(target, locked.outcome);
			decision = (locked.leaseId != null)
					? Decision.of(List.of(status), List.of(new Lease(target, locked.leaseId, cost)))
					: Decision.of(status);
		}
		return decision;
	}

	/**
	 * Reads the state under an even stamp, decides, and either returns a rejection once the stamp shows the state did
	 * not change meanwhile, or commits an allowed call by moving the stamp from that even value to odd, applying the
	 * cost, and moving it to the next even value. The time is read after the stamp, so that with a monotonic clock a
	 * decision never sees a state from its future.
	 */
	private Outcome decideOptimistically(Slot slot, KeyedLimit target, long cost) {
		Limit limit = target.limit();
		for (int losses = 0;; losses++) {
			int stamp = slot.stamp();
			if ((stamp & 1) == 0) {
				long now = this.timeSource.nowMicros();
				Outcome outcome = slot.evaluate(limit, now, cost);
				if (!outcome.allowed()) {
					if (slot.validate(stamp)) {
						recordSometimes(slot, target, now);
						return outcome;
					}
				}
				else if (slot.tryLock(stamp)) {
					slot.apply(limit, now, cost);
					slot.unlock();
					recordSometimes(slot, target, now);
					return outcome;
				}
			}
			Slot.contended(losses);
		}
	}

	private Locked decideLockedOne(Slot slot, KeyedLimit target, long cost) {
		long now;
		Locked locked;
		slot.lock();
		try {
			now = this.timeSource.nowMicros();
			Outcome outcome = slot.evaluate(target.limit(), now, cost);
			String leaseId = outcome.allowed() ? slot.apply(target.limit(), now, cost) : null;
			locked = new Locked(outcome, leaseId);
		}
		finally {
			slot.unlock();
		}
		recordSometimes(slot, target, now);
		return locked;
	}

	private Decision decideLocked(List<KeyedLimit> limits, Slot[] held, long cost, long now) {
		List<LimitStatus> statuses = new ArrayList<>(held.length);
		boolean allowed = true;
		for (int i = 0; i < held.length; i++) {
			Outcome outcome = held[i].evaluate(limits.get(i).limit(), now, cost);
			allowed &= outcome.allowed();
			statuses.add(LimitStatus.of(limits.get(i), outcome));
		}
		List<Lease> leases = new ArrayList<>(0);
		if (allowed) {
			for (int i = 0; i < held.length; i++) {
				if (firstOccurrence(held, i)) {
					String leaseId = held[i].apply(limits.get(i).limit(), now, cost);
					if (leaseId != null) {
						leases.add(new Lease(limits.get(i), leaseId, cost));
					}
				}
			}
		}
		return Decision.of(statuses, leases);
	}

	private static boolean firstOccurrence(Slot[] held, int index) {
		for (int i = 0; i < index; i++) {
			if (held[i] == held[index]) {
				return false;
			}
		}
		return true;
	}

	@Override
	public List<LimitStatus> inspect(List<KeyedLimit> limits) {
		List<LimitStatus> statuses = new ArrayList<>(limits.size());
		for (KeyedLimit target : limits) {
			advanceCacheTime(this.timeSource.nowMicros());
			Slot slot = this.slots.getIfPresent(target);
			Outcome outcome;
			if (slot == null) {
				long now = this.timeSource.nowMicros();
				outcome = Slot.fresh(target.limit(), now, now).evaluate(target.limit(), now, 0);
			}
			else {
				slot.lock();
				try {
					outcome = slot.evaluate(target.limit(), this.timeSource.nowMicros(), 0);
				}
				finally {
					slot.unlock();
				}
			}
			statuses.add(LimitStatus.of(target, outcome));
		}
		return statuses;
	}

	@Override
	public void release(Decision decision) {
		for (Lease lease : decision.leases()) {
			Slot slot = this.policy.getIfPresentQuietly(lease.target());
			if (slot != null) {
				slot.lock();
				try {
					slot.release(lease.target().limit(), lease.id(), this.timeSource.nowMicros());
				}
				finally {
					slot.unlock();
				}
			}
		}
	}

	@Override
	public void reset(KeyedLimit limit) {
		Slot removed = this.slots.asMap().remove(limit);
		if (removed != null) {
			// A call that found this slot before the removal may be about to show it to Caffeine, which would put
			// it back: once discarded it is not, and should one have been put back just before, it goes again.
			removed.discard();
			this.slots.asMap().remove(limit, removed);
		}
		Recent shown = this.recent;
		if (shown != null && shown.key.equals(limit)) {
			this.recent = null;
		}
	}

	/**
	 * Returns the number of keyed limits held, as Caffeine estimates it, after forgetting the keys idle for longer than
	 * their retention: Caffeine's clock moves only with calls, so without this the count would stay where the last
	 * call left it once calls stop (a gauge read by every metrics scrape, for one).
	 * @return the keys held
	 */
	public long keyCount() {
		cleanUp();
		return this.slots.estimatedSize();
	}

	/**
	 * Performs pending evictions and expirations now, as Caffeine's {@code cleanUp}.
	 */
	public void cleanUp() {
		advanceCacheTime(this.timeSource.nowMicros());
		this.slots.cleanUp();
	}

	/**
	 * Finds the slot of a keyed limit without Caffeine's bookkeeping, or creates it through Caffeine.
	 */
	private Slot slot(KeyedLimit target) {
		Recent shown = this.recent;
		if (shown != null && shown.key == target && this.cacheTime.get() < shown.validUntil) {
			return shown.slot;
		}
		Slot slot = this.policy.getIfPresentQuietly(target);
		if (slot != null) {
			return slot;
		}
		long now = this.timeSource.nowMicros();
		advanceCacheTime(now);
		return this.slots.get(target, (key) -> Slot.fresh(key.limit(), now, now + recordInterval(key)));
	}

	/**
	 * Shows a call made at {@code now} to Caffeine when the key's last shown call is half a retention old (so that it
	 * expires no earlier than a retention after its last real call) or, at random, one call in
	 * {@value #RECORD_ONE_IN}. Should Caffeine have expired the key meanwhile, this slot, which the call just used,
	 * takes its place again, so that the call's permits are not forgotten; unless {@link #reset} discarded it, whose
	 * fresh state must win over a call that was in flight (RecentKeyTest).
	 */
	private void recordSometimes(Slot slot, KeyedLimit target, long now) {
		if (now < slot.recordBy && (ThreadLocalRandom.current().nextInt() & (RECORD_ONE_IN - 1)) != 0) {
			return;
		}
		if (slot.isDiscarded()) {
			return;
		}
		advanceCacheTime(now);
		long shownAt = this.cacheTime.get();
		Slot held = this.slots.get(target, (key) -> slot);
		// Caffeine (3.2) does not extend a variable expiry on a read hit: without this, a key in use would be
		// forgotten one retention after its creation, and come back fresh (RetentionTest).
		long keepNanos = RetentionExpiry.keepNanos(target);
		this.expiration.setExpiresAfter(target, keepNanos, TimeUnit.NANOSECONDS);
		if (!slot.recordNext(now + recordInterval(target))) {
			// reset discarded the slot meanwhile: take it out again if this call put it back
			this.slots.asMap().remove(target, slot);
			return;
		}
		if (held == slot) {
			// Caffeine's expiry was just set from a cache time at least shownAt: it returns this slot until then.
			long keep = keepNanos / 1000;
			this.recent = new Recent(target, slot, (shownAt > Long.MAX_VALUE - keep) ? Long.MAX_VALUE : shownAt + keep);
			if (slot.isDiscarded()) {
				// reset ran between the check above and this write: it may have cleared the recent key before it
				forgetRecent(target, slot, RemovalCause.EXPLICIT);
			}
		}
	}

	/** Caffeine's eviction listener, called as it evicts: the slot held as the recent key's is not handed out again. */
	private void forgetRecent(@Nullable KeyedLimit key, @Nullable Slot slot, RemovalCause cause) {
		Recent shown = this.recent;
		if (shown != null && shown.slot == slot) {
			this.recent = null;
		}
	}

	private void advanceCacheTime(long now) {
		long shown = this.cacheTime.get();
		while (now > shown && !this.cacheTime.compareAndSet(shown, now)) {
			shown = this.cacheTime.get();
		}
	}

	/** Half a retention: the longest a key in use goes without showing Caffeine a call. */
	static long recordInterval(KeyedLimit target) {
		return Math.max(1, target.limit().retentionMicros() / 2);
	}

	/**
	 * The key last shown to Caffeine, its slot, and the cache time (µs) until which Caffeine would return that slot.
	 */
	private record Recent(KeyedLimit key, Slot slot, long validUntil) {
	}

	/** What a locked decision on one limit gives. */
	private record Locked(Outcome outcome, @Nullable String leaseId) {
	}

	/**
	 * Keeps each keyed limit for its limit's retention after the last call Caffeine saw, plus the longest a key in use
	 * goes without showing Caffeine a call.
	 */
	private static final class RetentionExpiry implements Expiry<KeyedLimit, Slot> {

		static long keepNanos(KeyedLimit key) {
			long micros = key.limit().retentionMicros();
			micros = (micros > Long.MAX_VALUE / 2) ? Long.MAX_VALUE : micros + recordInterval(key);
			return (micros > Long.MAX_VALUE / 1000) ? Long.MAX_VALUE : micros * 1000;
		}

		@Override
		public long expireAfterCreate(KeyedLimit key, Slot value, long currentTime) {
			return keepNanos(key);
		}

		@Override
		public long expireAfterUpdate(KeyedLimit key, Slot value, long currentTime, long currentDuration) {
			return keepNanos(key);
		}

		@Override
		public long expireAfterRead(KeyedLimit key, Slot value, long currentTime, long currentDuration) {
			return keepNanos(key);
		}

	}

	/**
	 * Builds an {@link InMemoryRateLimiter}.
	 */
	public static final class Builder {

		private long maxKeys = DEFAULT_MAX_KEYS;

		private TimeSource timeSource = TimeSource.system();

		private Builder() {
		}

		/**
		 * Sets the bound on keyed limits held.
		 * @param maxKeys the bound, at least 1
		 * @return this builder
		 */
		public Builder maxKeys(long maxKeys) {
			if (maxKeys < 1) {
				throw new IllegalArgumentException("maxKeys must be at least 1 (was " + maxKeys + ")");
			}
			this.maxKeys = maxKeys;
			return this;
		}

		/**
		 * Sets the clock.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * Builds the limiter.
		 * @return the limiter
		 */
		public InMemoryRateLimiter build() {
			return new InMemoryRateLimiter(this);
		}

	}

}
