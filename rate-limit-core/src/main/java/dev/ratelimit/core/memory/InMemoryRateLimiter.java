package dev.ratelimit.core.memory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Lease;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.algorithm.Outcome;
import dev.ratelimit.core.internal.algorithm.SpentShare;
import dev.ratelimit.core.internal.algorithm.TokenBucket;

import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} that keeps every key's state in this JVM.
 *
 * <p>
 * An idle key is dropped once its state equals a fresh one, and at most {@code maxKeys}
 * keys are held. A client key longer than 72 characters is held as its SHA-256. The
 * limiter is thread-safe and takes no global lock.
 */
public final class InMemoryRateLimiter implements RateLimiter {

	/** The default bound on tracked keys. */
	public static final long DEFAULT_MAX_KEYS = 1_000_000;

	/** The least store time between two background sweeps of expired keys: a second. */
	static final long SWEEP_SPACING_MICROS = 1_000_000;

	/*
	 * A key is dropped once idle for its limit's retention (and at most half as long
	 * again), when its state equals a fresh one. A call adds a key only if it takes
	 * permits, so a rejected call adds none. The store is a plain ConcurrentHashMap: a
	 * look-up is one map read, and each slot carries the store time it expires at, which
	 * a key's creation sets and, for a key in use, one call each half retention moves on
	 * (records). A slot past that time counts as absent at once; sweeps take it out of
	 * the map later (see sweepExpired). Nothing else reads or extends the expiry.
	 *
	 * Each slot's version stamp is also its lock: no global lock. A call with one bucket
	 * or window limit reads the state optimistically and commits with one
	 * compare-and-set, so a rejected call writes nothing. Other calls hold the locks of
	 * all their limits at once (all or none, so no deadlock), so all their limits are
	 * decided together.
	 */

	/**
	 * Each keyed limit's slot, under the key {@link StateKey#of} gives it: its policy,
	 * client key (or its digest), name and algorithm, never the limit's parameters.
	 */
	private final ConcurrentHashMap<Object, Slot> map = new ConcurrentHashMap<>();

	private final TimeSource timeSource;

	/**
	 * The store's clock, in microseconds: the latest time a call recorded, added or
	 * inspected, or a clean-up saw, so that the hot path reads the time source only once
	 * and a slot's expiry is checked against a field read.
	 */
	private final AtomicLong cacheTime;

	/**
	 * No slot in the store expires before this store time: the earliest expiry a sweep
	 * left, lowered by each slot added. A sweep of expired keys is due once the store's
	 * clock reaches it.
	 */
	private final AtomicLong nextExpiry = new AtomicLong(Long.MAX_VALUE);

	/** One sweep of expired keys at a time; a clean-up waits for one under way. */
	private final ReentrantLock expiring = new ReentrantLock();

	/** The store time before which no key added starts a background sweep. */
	private volatile long nextBackgroundSweep;

	private final KeyEvictor evictor;

	private final Penalties penalties;

	private final CarriedShares carried;

	/*
	 * The key last added or recorded, with its slot. A call made with that very
	 * KeyedLimit instance finds its slot here without the look-up (about 6 ns of a 40 to
	 * 50 ns decision). It is written only when a key is added or recorded, so threads
	 * calling many keys do not contend on it. It is cleared when that slot is swept out
	 * or evicted, and by reset.
	 */
	private volatile @Nullable Recent recent;

	private InMemoryRateLimiter(Builder builder) {
		this.timeSource = builder.timeSource;
		this.cacheTime = new AtomicLong(this.timeSource.nowMicros());
		this.evictor = new KeyEvictor(this.map, this.timeSource, this::cleanUp, this::backgroundSweepWanted,
				this::forgetRecent, builder.maxKeys, builder.sweeper);
		this.penalties = new Penalties(this.timeSource, builder.maxKeys);
		this.carried = new CarriedShares(this.timeSource, builder.maxKeys);
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
		KeyedLimit.requireOneLimitPerName(limits);
		boolean penalties = hasPenalty(limits);
		for (;;) {
			Decision decision = acquireAll(limits, cost, penalties);
			if (decision != null) {
				return decision;
			}
		}
	}

	private static boolean hasPenalty(List<KeyedLimit> limits) {
		for (int i = 0; i < limits.size(); i++) {
			if (limits.get(i).limit().penaltyMicros() > 0) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Decides a call with a limit that carries a penalty or names counterparts, on the
	 * path of calls with several limits, where penalties are checked and imposed and
	 * spent shares taken over.
	 */
	private Decision acquireWithPenalty(List<KeyedLimit> limits, long cost) {
		boolean penalties = hasPenalty(limits);
		for (;;) {
			Decision decision = acquireAll(limits, cost, penalties);
			if (decision != null) {
				return decision;
			}
		}
	}

	/**
	 * Decides a call with several limits. A key not held is decided on a fresh slot that
	 * the call adds only if {@link #keeps} says so, under the locks of all the call's
	 * slots. Returns {@code null} when the call must start again: a slot it found was
	 * evicted meanwhile, or another call added a key that this allowed call was about to
	 * add. With {@code penalties}, a limit whose policy and client key serve a penalty
	 * rejects the call, and a limit with a penalty that rejects it on its own starts one.
	 */
	private @Nullable Decision acquireAll(List<KeyedLimit> limits, long cost, boolean penalties) {
		int count = limits.size();
		Slot[] held = new Slot[count];
		// Whether the slot is this call's own fresh one, not yet in the map.
		boolean[] own = null;
		for (int i = 0; i < count; i++) {
			KeyedLimit target = limits.get(i);
			Slot slot = find(target);
			if (slot == null) {
				if (own == null) {
					own = new boolean[count];
				}
				slot = ownEarlier(limits, held, own, i);
				if (slot == null) {
					long now = this.timeSource.nowMicros();
					slot = Slot.fresh(target.limit(), now, now + recordInterval(target.limit()));
				}
				own[i] = true;
			}
			held[i] = slot;
		}
		CarriedShares.Carry[] carries = planCarries(limits, held, own);
		Slot[] distinct = distinct(held);
		if (!lockAll(distinct)) {
			for (int i = 0; i < count; i++) {
				if (held[i].isDiscarded()) {
					forgetRetired(limits.get(i), held[i]);
				}
			}
			return null;
		}
		long now;
		long shownAt = 0;
		boolean[] added = null;
		boolean full = false;
		boolean[] converted = null;
		boolean[] tookOver = null;
		Decision decision = null;
		try {
			now = this.timeSource.nowMicros();
			for (int i = 0; i < count; i++) {
				if ((own == null || !own[i]) && held[i].convert(limits.get(i).limit(), now)) {
					if (converted == null) {
						converted = new boolean[count];
					}
					converted[i] = true;
				}
			}
			if (carries != null) {
				tookOver = takeOver(limits, held, carries, now);
			}
			List<LimitStatus> statuses = new ArrayList<>(count);
			boolean allowed = true;
			long[] marks = null;
			for (int i = 0; i < count; i++) {
				Outcome outcome = held[i].evaluate(limits.get(i).limit(), now, cost);
				allowed &= outcome.allowed();
				statuses.add(outcome.statusOf(limits.get(i)));
				if (outcome.mark() != 0) {
					if (marks == null) {
						marks = new long[count];
					}
					marks[i] = outcome.mark();
				}
			}
			if (penalties) {
				allowed &= servePenalties(limits, statuses, now);
				if (!allowed) {
					awaitPenalties(statuses);
				}
			}
			boolean lost = false;
			if (own != null) {
				advanceCacheTime(now);
				shownAt = this.cacheTime.get();
				added = new boolean[count];
				for (int i = 0; i < count && !lost; i++) {
					if (own[i] && firstOccurrence(held, i)
							&& (keeps(limits.get(i).limit(), allowed, cost) || (tookOver != null && tookOver[i]))) {
						if (!this.evictor.hasRoom()) {
							// no room until a sweep has made some: decided on a state
							// that is not kept
							this.evictor.notAdded(allowed ? cost : 0);
							full = true;
							continue;
						}
						// Added while locked: a call that finds it waits until this one
						// has taken its permits.
						added[i] = add(StateKey.of(limits.get(i)), held[i], shownAt);
						lost = !added[i] && allowed;
					}
				}
			}
			if (!lost) {
				decision = decideLocked(limits, held, statuses, allowed ? marks : null, allowed, cost, now);
			}
		}
		finally {
			for (Slot slot : distinct) {
				slot.unlock();
			}
		}
		boolean anyAdded = false;
		for (int i = 0; i < count; i++) {
			boolean took = tookOver != null && tookOver[i];
			if (took && (own == null || !own[i] || (added != null && added[i]))) {
				// the state that took the share over is kept: it takes that share over
				// no more
				this.carried.took(StateKey.of(limits.get(i)), carries[i].until());
			}
			if (added != null && added[i]) {
				remember(limits.get(i), held[i]);
				anyAdded = true;
			}
			else if ((converted != null && converted[i]) || (took && (own == null || !own[i]))) {
				held[i].recordSoon();
				recordSometimes(held[i], limits.get(i), now);
			}
			else if (decision != null && (own == null || !own[i])) {
				recordSometimes(held[i], limits.get(i), now);
			}
		}
		if (anyAdded || full) {
			// With every slot unlocked: a sweep takes their locks. A store without room
			// makes sure a sweep is on its way too, so that it cannot stay full.
			this.evictor.sweepIfWanted();
		}
		if (penalties && decision != null && !decision.isAllowed()) {
			imposePenalties(decision.statuses(), now);
		}
		return decision;
	}

	/**
	 * Reads, holding no lock, what each limit of a call that names counterparts takes
	 * over (once per distinct slot): a state that holds nothing spent takes over the
	 * largest share of its counterparts' states that counts later than the shares it took
	 * over before ({@link CarriedShares}).
	 * @return per limit, what it takes over, or {@code null} for none; {@code null} if no
	 * limit takes anything over
	 */
	private CarriedShares.Carry @Nullable [] planCarries(List<KeyedLimit> limits, Slot[] held,
			boolean @Nullable [] own) {
		CarriedShares.Carry[] carries = null;
		boolean read = false;
		long now = 0;
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit target = limits.get(i);
			if (target.carryFrom().isEmpty() || !firstOccurrence(held, i)) {
				continue;
			}
			if (!read) {
				now = this.timeSource.nowMicros();
				read = true;
			}
			Slot slot = held[i];
			Boolean unspent = (own != null && own[i]) ? Boolean.valueOf(slot.isUnspent(target.limit(), now))
					: slot.peekUnspent(target.limit(), now);
			CarriedShares.Carry carry = Boolean.TRUE.equals(unspent) ? carry(target, limits, now) : null;
			if (carry != null) {
				if (carries == null) {
					carries = new CarriedShares.Carry[limits.size()];
				}
				carries[i] = carry;
			}
		}
		return carries;
	}

	/**
	 * Returns what a limit whose state holds nothing spent takes over at {@code now}:
	 * read from its counterparts' states held, each distinct state once, as the first of
	 * its counterparts that was written under it (or the first) sees it; a counterpart
	 * that shares state with a limit of the call is not read, being the call's own.
	 */
	private CarriedShares.@Nullable Carry carry(KeyedLimit target, List<KeyedLimit> limits, long now) {
		List<KeyedLimit> counterparts = target.counterparts();
		List<SpentShare> shares = new ArrayList<>(counterparts.size());
		for (int i = 0; i < counterparts.size(); i++) {
			KeyedLimit counterpart = counterparts.get(i);
			if (!firstOfItsState(counterparts, i) || sharesStateWithAny(counterpart, limits)) {
				continue;
			}
			Slot slot = live(this.map.get(StateKey.of(counterpart)));
			SpentShare share = (slot != null) ? slot.peekShare(candidates(counterparts, i), now) : null;
			if (share != null) {
				shares.add(share);
			}
		}
		return CarriedShares.carry(shares, this.carried.until(StateKey.of(target)), target.limit().capacity());
	}

	private static boolean firstOfItsState(List<KeyedLimit> counterparts, int index) {
		for (int i = 0; i < index; i++) {
			if (counterparts.get(i).sharesStateWith(counterparts.get(index))) {
				return false;
			}
		}
		return true;
	}

	private static boolean sharesStateWithAny(KeyedLimit counterpart, List<KeyedLimit> limits) {
		for (KeyedLimit limit : limits) {
			if (limit.sharesStateWith(counterpart)) {
				return true;
			}
		}
		return false;
	}

	/** The limits of the counterparts from {@code index} on that share its state. */
	private static List<Limit> candidates(List<KeyedLimit> counterparts, int index) {
		List<Limit> candidates = new ArrayList<>(1);
		for (int i = index; i < counterparts.size(); i++) {
			if (counterparts.get(i).sharesStateWith(counterparts.get(index))) {
				candidates.add(counterparts.get(i).limit());
			}
		}
		return candidates;
	}

	/**
	 * Lets each state that was read as holding nothing spent, and still does, take its
	 * share over; under the locks of the call.
	 * @return per limit, whether its state took a share over
	 */
	private static boolean[] takeOver(List<KeyedLimit> limits, Slot[] held, CarriedShares.@Nullable Carry[] carries,
			long now) {
		boolean[] tookOver = new boolean[limits.size()];
		for (int i = 0; i < limits.size(); i++) {
			Limit limit = limits.get(i).limit();
			if (carries[i] != null && held[i].isUnspent(limit, now)) {
				held[i].takeOver(limit, now, carries[i].permits());
				tookOver[i] = true;
			}
		}
		return tookOver;
	}

	/**
	 * Replaces the status of each limit with a penalty whose policy and client key serve
	 * one by its penalized status.
	 * @return whether no penalty is running for the call's limits
	 */
	private boolean servePenalties(List<KeyedLimit> limits, List<LimitStatus> statuses, long now) {
		boolean none = true;
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit target = limits.get(i);
			if (target.limit().penaltyMicros() > 0) {
				long left = this.penalties.left(target, now);
				if (left > 0) {
					statuses.set(i, LimitStatus.ofPenalty(target, left));
					none = false;
				}
			}
		}
		return none;
	}

	/**
	 * Makes each limit with a penalty that rejects a call on its own, and so starts its
	 * penalty, wait for that penalty: the call that starts a penalty waits for it, as
	 * every call during it does.
	 */
	private static void awaitPenalties(List<LimitStatus> statuses) {
		for (int i = 0; i < statuses.size(); i++) {
			LimitStatus status = statuses.get(i);
			long penalty = status.target().limit().penaltyMicros();
			if (!status.allowed() && !status.penalized() && penalty > 0) {
				statuses.set(i, new LimitStatus(status.target(), false, status.remaining(),
						Math.max(status.retryAfterMicros(), penalty), Math.max(status.resetAfterMicros(), penalty),
						status.delayMicros(), status.exceedsCapacity(), false));
			}
		}
	}

	/**
	 * Starts the penalty of each limit with a penalty that rejected a call on its own:
	 * its policy and client key are refused from {@code now} on.
	 */
	private void imposePenalties(List<LimitStatus> statuses, long now) {
		for (LimitStatus status : statuses) {
			if (!status.allowed() && !status.penalized() && status.target().limit().penaltyMicros() > 0) {
				this.penalties.impose(status.target(), now);
			}
		}
	}

	/**
	 * Returns the fresh slot this call made for an earlier limit equal to limit
	 * {@code index}, if any.
	 */
	private static @Nullable Slot ownEarlier(List<KeyedLimit> limits, Slot[] held, boolean[] own, int index) {
		for (int i = 0; i < index; i++) {
			if (own[i] && limits.get(i).equals(limits.get(index))) {
				return held[i];
			}
		}
		return null;
	}

	/**
	 * Whether a call on a fresh slot leaves a state worth adding: it took permits, or the
	 * slot is a token bucket that starts below capacity, whose refill starts when a call
	 * first decides on it, allowed or not, as the Redis script's "first sight" records
	 * it.
	 */
	private static boolean keeps(Limit limit, boolean allowed, long cost) {
		return (allowed && cost > 0)
				|| (limit.algorithm() == Algorithm.TOKEN_BUCKET && limit.initial() < limit.capacity());
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
	 * Takes the locks of all the slots of a call, or none: a slot held by another call
	 * makes this one let go of what it holds and try again, so that two calls never wait
	 * for each other (no lock order needed, no deadlock).
	 * @return whether all are held; false, with none held, if one was evicted (or reset
	 * while another call held it)
	 */
	private static boolean lockAll(Slot[] slots) {
		for (int spins = 0;; spins++) {
			int locked = 0;
			while (locked < slots.length && slots[locked].tryLock()) {
				locked++;
			}
			if (locked == slots.length) {
				return true;
			}
			boolean retired = slots[locked].isDiscarded();
			while (locked > 0) {
				slots[--locked].unlock();
			}
			if (retired) {
				return false;
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
	 * Decides a call against one limit and, if allowed, takes {@code cost} permits, as
	 * {@link #acquire(KeyedLimit, long)} does, but answers only whether the call may
	 * proceed: the same decision without building a {@link Decision}, for callers that
	 * need no headers.
	 * @param limit the keyed limit, of any algorithm but {@link Algorithm#CONCURRENCY}
	 * (whose permits must be released through a decision) and a leaky bucket in mode
	 * {@link LeakMode#SHAPE} (whose calls must wait their delay)
	 * @param cost the permits the call takes, at least 0
	 * @return whether the call is allowed
	 * @throws IllegalArgumentException if the cost is negative, or the limit is a
	 * concurrency limit or a shaping leaky bucket
	 */
	public boolean tryAcquire(KeyedLimit limit, long cost) {
		checkCost(cost);
		Algorithm algorithm = limit.limit().algorithm();
		if (algorithm != Algorithm.TOKEN_BUCKET) {
			checkTryable(limit);
		}
		if (limit.limit().penaltyMicros() > 0 || !limit.carryFrom().isEmpty()) {
			return acquireWithPenalty(List.of(limit), cost).isAllowed();
		}
		for (;;) {
			Slot slot = find(limit);
			if (slot == null) {
				Decision decision = acquireNew(limit, cost);
				if (decision != null) {
					return decision.isAllowed();
				}
				continue;
			}
			boolean unchanged = slot.writtenUnder(limit.limit());
			if (unchanged && slot instanceof Slot.BucketSlot bucket && algorithm == Algorithm.TOKEN_BUCKET) {
				Boolean taken = tryTakeTokens(bucket, limit, cost);
				if (taken != null) {
					return taken;
				}
			}
			else {
				Outcome outcome = (unchanged && slot.optimistic()) ? decideOptimistically(slot, limit, cost)
						: outcomeOf(decideLockedOne(slot, limit, cost));
				if (outcome != null) {
					return outcome.allowed();
				}
			}
			forgetRetired(limit, slot);
		}
	}

	private static void checkTryable(KeyedLimit limit) {
		if (limit.limit().algorithm() == Algorithm.CONCURRENCY) {
			throw new IllegalArgumentException("tryAcquire cannot hand out the lease of concurrency limit '"
					+ limit.policy() + "'; use acquire and release the decision");
		}
		if (limit.limit().mode() == LeakMode.SHAPE) {
			// true would tell the caller to go now, while the bucket counts the call as
			// waiting its turn.
			throw new IllegalArgumentException("tryAcquire cannot tell the delay of shaping leaky-bucket limit '"
					+ limit.policy() + "'; use acquire and wait the decision's delay");
		}
	}

	/**
	 * {@link #decideOptimistically} for a token bucket whose caller needs only the
	 * verdict: one refill, no division (remaining, retry-after and reset-after are not
	 * computed), and the state written straight into the slot. The level is computed from
	 * values read under an even stamp; an allowed call commits by moving that very stamp,
	 * so it replaces exactly the state it computed from.
	 * @return the verdict, or {@code null} if the slot was evicted (look the key up
	 * again)
	 */
	private @Nullable Boolean tryTakeTokens(Slot.BucketSlot slot, KeyedLimit target, long cost) {
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
						return Boolean.FALSE;
					}
				}
				else if (slot.tryLock(stamp)) {
					slot.set(level - need, at);
					slot.unlock();
					recordSometimes(slot, target, now);
					return Boolean.TRUE;
				}
			}
			else if (slot.isDiscarded()) {
				return null;
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
		if (target.limit().penaltyMicros() > 0 || !target.carryFrom().isEmpty()) {
			return acquireWithPenalty(List.of(target), cost);
		}
		for (;;) {
			Slot slot = find(target);
			if (slot == null) {
				Decision decision = acquireNew(target, cost);
				if (decision != null) {
					return decision;
				}
				continue;
			}
			// a changed limit converts the state under the lock
			if (slot.optimistic() && slot.writtenUnder(target.limit())) {
				Outcome outcome = decideOptimistically(slot, target, cost);
				if (outcome != null) {
					return Decision.of(outcome.statusOf(target), outcome.mark());
				}
			}
			else {
				Locked locked = decideLockedOne(slot, target, cost);
				if (locked != null) {
					return decision(target, cost, locked.outcome, locked.leaseId);
				}
			}
			forgetRetired(target, slot);
		}
	}

	private static Decision decision(KeyedLimit target, long cost, Outcome outcome, @Nullable String leaseId) {
		LimitStatus status = outcome.statusOf(target);
		return (leaseId != null) ? Decision.of(List.of(status), List.of(new Lease(target, leaseId, cost)))
				: Decision.of(status, outcome.mark());
	}

	/**
	 * Decides a call on a key not held, on a fresh slot that the call adds only if
	 * {@link #keeps} says so: a rejected call leaves no key behind. Returns {@code null}
	 * when another call added the key first: this allowed call must then decide on that
	 * key's slot.
	 */
	private @Nullable Decision acquireNew(KeyedLimit target, long cost) {
		Limit limit = target.limit();
		long now = this.timeSource.nowMicros();
		Slot slot = Slot.fresh(limit, now, now + recordInterval(limit));
		Outcome outcome = slot.evaluate(limit, now, cost);
		// The slot is this call's alone until it is added: no lock needed.
		String leaseId = outcome.allowed() ? slot.apply(limit, now, cost) : null;
		if (keeps(limit, outcome.allowed(), cost) && !this.evictor.hasRoom()) {
			// no room until a sweep has made some: decided on a state that is not kept
			this.evictor.notAdded(outcome.allowed() ? cost : 0);
			this.evictor.sweepIfWanted();
		}
		else if (keeps(limit, outcome.allowed(), cost)) {
			advanceCacheTime(now);
			long shownAt = this.cacheTime.get();
			if (add(StateKey.of(target), slot, shownAt)) {
				remember(target, slot);
				this.evictor.sweepIfWanted();
			}
			else if (outcome.allowed()) {
				return null;
			}
		}
		return decision(target, cost, outcome, leaseId);
	}

	/**
	 * Reads the state under an even stamp, decides, and either returns a rejection once
	 * the stamp shows the state did not change meanwhile, or commits an allowed call by
	 * moving the stamp from that even value to odd, applying the cost, and moving it to
	 * the next even value. The time is read after the stamp, so that with a monotonic
	 * clock a decision never sees a state from its future.
	 * @return the outcome, or {@code null} if the slot was evicted (look the key up
	 * again)
	 */
	private @Nullable Outcome decideOptimistically(Slot slot, KeyedLimit target, long cost) {
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
			else if (slot.isDiscarded()) {
				return null;
			}
			Slot.contended(losses);
		}
	}

	/**
	 * Decides a call under the slot's lock.
	 * @return the outcome and lease, or {@code null} if the slot was evicted (look the
	 * key up again)
	 */
	private @Nullable Locked decideLockedOne(Slot slot, KeyedLimit target, long cost) {
		if (!slot.lockUnlessDiscarded()) {
			return null;
		}
		long now;
		Locked locked;
		boolean converted;
		try {
			now = this.timeSource.nowMicros();
			converted = slot.convert(target.limit(), now);
			Outcome outcome = slot.evaluate(target.limit(), now, cost);
			String leaseId = outcome.allowed() ? slot.apply(target.limit(), now, cost) : null;
			locked = new Locked(outcome, leaseId);
		}
		finally {
			slot.unlock();
		}
		if (converted) {
			// recorded now, which keeps it for its new limit's retention
			slot.recordSoon();
		}
		recordSometimes(slot, target, now);
		return locked;
	}

	private static @Nullable Outcome outcomeOf(@Nullable Locked locked) {
		return (locked != null) ? locked.outcome : null;
	}

	private Decision decideLocked(List<KeyedLimit> limits, Slot[] held, List<LimitStatus> statuses,
			long @Nullable [] marks, boolean allowed, long cost, long now) {
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
		return Decision.of(statuses, leases, Decision.Source.BACKEND, marks);
	}

	private static boolean firstOccurrence(Slot[] held, int index) {
		for (int i = 0; i < index; i++) {
			if (held[i] == held[index]) {
				return false;
			}
		}
		return true;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * A read changes nothing a call would see: not the time a key expires, nor which keys
	 * are evicted.
	 */
	@Override
	public List<LimitStatus> inspect(List<KeyedLimit> limits) {
		KeyedLimit.requireOneLimitPerName(limits);
		List<LimitStatus> statuses = new ArrayList<>(limits.size());
		for (KeyedLimit target : limits) {
			Limit limit = target.limit();
			long now = this.timeSource.nowMicros();
			advanceCacheTime(now);
			Slot slot = live(this.map.get(StateKey.of(target)));
			Outcome outcome = target.carryFrom().isEmpty() ? null : peekTakenOver(target, slot, limits, now);
			if (outcome == null) {
				outcome = (slot != null) ? slot.peek(limit, now) : null;
			}
			if (outcome == null) {
				outcome = Slot.fresh(limit, now, now).evaluate(limit, now, 0);
			}
			long left = (limit.penaltyMicros() > 0) ? this.penalties.left(target, now) : 0;
			statuses.add((left > 0) ? LimitStatus.ofPenalty(target, left) : outcome.statusOf(target));
		}
		return statuses;
	}

	/**
	 * Decides a call of cost 0 on a limit's state as a call would see it after taking a
	 * share over, changing nothing; {@code null} if it takes nothing over.
	 */
	private @Nullable Outcome peekTakenOver(KeyedLimit target, @Nullable Slot slot, List<KeyedLimit> limits, long now) {
		Limit limit = target.limit();
		if (slot != null && !Boolean.TRUE.equals(slot.peekUnspent(limit, now))) {
			return null;
		}
		CarriedShares.Carry carry = carry(target, limits, now);
		if (carry == null) {
			return null;
		}
		if (slot != null) {
			return slot.peekTakenOver(limit, now, carry.permits());
		}
		Slot fresh = Slot.fresh(limit, now, now);
		fresh.takeOver(limit, now, carry.permits());
		return fresh.evaluate(limit, now, 0);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * A key no longer held (expired, evicted or reset) has nothing to give back to: its
	 * next call sees a fresh state.
	 */
	@Override
	public void refund(Decision decision, List<KeyedLimit> limits, long cost) {
		checkCost(cost);
		if (!refundable(decision) || cost == 0) {
			return;
		}
		List<LimitStatus> statuses = decision.statuses();
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit target = limits.get(i);
			int index = indexOf(statuses, target);
			if (index < 0 || target.limit().algorithm() == Algorithm.CONCURRENCY
					|| limits.subList(0, i).contains(target)) {
				// a limit named twice took its permits once
				continue;
			}
			Object key = StateKey.of(target);
			Slot slot = live(this.map.get(key));
			if (slot == null || !slot.lockUnlessDiscarded()) {
				continue;
			}
			boolean fresh = false;
			try {
				long now = this.timeSource.nowMicros();
				Limit limit = target.limit();
				slot.refund(limit, now, cost, decision.mark(index));
				// back to a state that decides as a fresh one: retired as the evictor
				// does,
				// so that no call decides on it any more, and a refunded success keeps
				// nothing here (as the Redis script deletes such a key)
				fresh = slot.writtenUnder(limit) && KeyEvictor.cost(limit, slot.evaluate(limit, now, 0),
						Slot.fresh(limit, now, now).evaluate(limit, now, 0)) == KeyEvictor.FRESH;
				if (fresh) {
					slot.retire();
				}
			}
			finally {
				if (!fresh) {
					slot.unlock();
				}
			}
			if (fresh) {
				this.map.remove(key, slot);
				forgetRecent(slot);
			}
		}
	}

	/**
	 * Returns whether a decision took permits that a refund may give back: it was allowed
	 * and made by limits, this limiter's or a failure policy's local ones.
	 * @param decision the decision
	 * @return whether to refund it
	 */
	static boolean refundable(Decision decision) {
		return decision.isAllowed() && (decision.source() == Decision.Source.BACKEND
				|| decision.source() == Decision.Source.LOCAL_FALLBACK);
	}

	/**
	 * Returns the index of a limit's status in a decision, or -1.
	 * @param statuses the decision's statuses
	 * @param target the keyed limit
	 * @return the index
	 */
	static int indexOf(List<LimitStatus> statuses, KeyedLimit target) {
		for (int i = 0; i < statuses.size(); i++) {
			if (statuses.get(i).target().equals(target)) {
				return i;
			}
		}
		return -1;
	}

	@Override
	public void release(Decision decision) {
		for (Lease lease : decision.leases()) {
			Slot slot = live(this.map.get(StateKey.of(lease.target())));
			// An evicted slot took its leases with it: the client got them back when it
			// was evicted.
			if (slot != null && slot.lockUnlessDiscarded()) {
				try {
					slot.release(lease.target().limit(), lease.id(), this.timeSource.nowMicros());
				}
				finally {
					slot.unlock();
				}
			}
		}
	}

	/**
	 * Renews the leases of a decision whose call is still in flight. Each renewal also
	 * counts as a call of its key, so that a key whose only activity is a long call
	 * holding its permit is kept as long as that call renews it.
	 */
	@Override
	public void renew(Decision decision) {
		for (Lease lease : decision.leases()) {
			Slot slot = live(this.map.get(StateKey.of(lease.target())));
			// An evicted slot took its leases with it: there is nothing left to renew.
			if (slot != null && slot.lockUnlessDiscarded()) {
				long now;
				try {
					now = this.timeSource.nowMicros();
					slot.renew(lease.target().limit(), lease.id(), now);
				}
				finally {
					slot.unlock();
				}
				recordSometimes(slot, lease.target(), now);
			}
		}
	}

	@Override
	public void reset(KeyedLimit limit) {
		Object key = StateKey.of(limit);
		Slot removed = this.map.remove(key);
		if (removed != null) {
			// A call that found this slot before the removal may be about to record it,
			// which would put it back: once discarded it is not, and should one have been
			// put back just before, it goes again.
			removed.discard();
			this.map.remove(key, removed);
		}
		Recent shown = this.recent;
		if (shown != null && shown.key.sharesStateWith(limit)) {
			this.recent = null;
		}
		this.penalties.lift(limit);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Each key held is removed as {@link #reset(KeyedLimit)} removes one, so that a call
	 * in flight on it cannot put it back. The counts of evicted keys are kept.
	 */
	@Override
	public void resetAll() {
		for (Object key : this.map.keySet()) {
			Slot removed = this.map.remove(key);
			if (removed != null) {
				removed.discard();
				this.map.remove(key, removed);
			}
		}
		this.recent = null;
		this.penalties.clear();
		this.carried.clear();
	}

	/**
	 * Returns the number of keyed limits held, after forgetting the keys idle for longer
	 * than their retention: the store's clock moves only with calls, so without this the
	 * count would stay where the last call left it once calls stop (a gauge read by every
	 * metrics scrape, for one).
	 * @return the keys held
	 */
	public long keyCount() {
		cleanUp();
		return this.map.mappingCount();
	}

	/**
	 * Returns the number of slots in the store, those past their retention that no sweep
	 * has taken out yet included; for tests.
	 */
	long storedKeys() {
		return this.map.mappingCount();
	}

	/**
	 * Returns how many keys were evicted to stay within {@code maxKeys} while their state
	 * was back to fresh: nothing was lost. Keys dropped after their retention and keys
	 * reset are not counted.
	 * @return the keys evicted back to fresh
	 */
	public long evictedFreshKeys() {
		return this.evictor.evictedFresh();
	}

	/**
	 * Returns how many keys were evicted to stay within {@code maxKeys} while their state
	 * still differed from a fresh one: each was the nearest to fresh when no key held was
	 * back to fresh, and its client got back the permits it had spent (at most a share of
	 * its limit that {@code maxKeys - maxKeys / 16} other keys had spent too).
	 * @return the keys evicted before they were back to fresh
	 */
	public long evictedSpentKeys() {
		return this.evictor.evictedSpent();
	}

	/**
	 * Returns the permits that evicting keys not back to fresh handed back, summed over
	 * all limits.
	 */
	long permitsHandedBack() {
		return this.evictor.permitsHandedBack();
	}

	/**
	 * Takes the keys idle for longer than their retention out of the store now, if any
	 * may be: what a sweep would do, on the caller's thread.
	 */
	public void cleanUp() {
		advanceCacheTime(this.timeSource.nowMicros());
		sweepExpired();
	}

	/**
	 * Whether a slot in the store may have expired: the store's clock has reached the
	 * earliest expiry the last sweep left or a slot added since set.
	 */
	private boolean expiryDue() {
		return this.cacheTime.get() >= this.nextExpiry.get();
	}

	/**
	 * Whether a key added now should start a sweep of expired keys in the background: one
	 * is due, and the last ended at least {@link #SWEEP_SPACING_MICROS}, or fifty times
	 * as long as it took, before (so that sweeps of a large store take at most 2% of a
	 * core).
	 */
	private boolean backgroundSweepWanted() {
		return expiryDue() && this.cacheTime.get() >= this.nextBackgroundSweep;
	}

	/*
	 * A sweep reads every key once, a cache miss each (a few tenths of a second for a
	 * million keys): it runs when a slot may have expired, at the clean-up of a key count
	 * (a metrics scrape), before an eviction sweep, and in the background after a key is
	 * added, at most once per SWEEP_SPACING. In between, an expired slot stays in the map
	 * but counts as absent.
	 */
	/**
	 * Takes every slot expired at the store's clock out of the map, and sets when the
	 * next one expires.
	 */
	private void sweepExpired() {
		this.expiring.lock();
		try {
			if (!expiryDue()) {
				return;
			}
			long started = System.nanoTime();
			// Raised first: a slot added during the sweep, which it may not see, lowers
			// it again.
			this.nextExpiry.set(Long.MAX_VALUE);
			long now = this.cacheTime.get();
			long earliest = Long.MAX_VALUE;
			for (Map.Entry<Object, Slot> entry : this.map.entrySet()) {
				Slot slot = entry.getValue();
				long expiresAt = slot.expiresAt;
				if (now >= expiresAt && sweepOut(entry.getKey(), slot, now)) {
					forgetRecent(slot);
				}
				else {
					// read again: a slot kept because a call recorded it meanwhile
					// expires later than it did
					earliest = Math.min(earliest, slot.expiresAt);
				}
			}
			lowerNextExpiry(earliest);
			long took = (System.nanoTime() - started) / 1000;
			this.nextBackgroundSweep = now + Math.max(SWEEP_SPACING_MICROS, 50 * took);
		}
		finally {
			this.expiring.unlock();
		}
	}

	/**
	 * Takes a slot out of the map if, under the lock of its map bin, it is still the
	 * key's and still expired at store time {@code now}: a call that recorded it
	 * meanwhile (moving its expiry on, under the same lock) keeps it.
	 * @return whether it was taken out
	 */
	private boolean sweepOut(Object key, Slot slot, long now) {
		boolean[] out = new boolean[1];
		this.map.computeIfPresent(key, (ignored, present) -> {
			out[0] = present == slot && now >= slot.expiresAt;
			return out[0] ? null : present;
		});
		return out[0];
	}

	private void lowerNextExpiry(long expiresAt) {
		long next = this.nextExpiry.get();
		while (expiresAt < next && !this.nextExpiry.compareAndSet(next, expiresAt)) {
			next = this.nextExpiry.get();
		}
	}

	/**
	 * Returns the slot unless it has expired at the store's clock.
	 */
	private @Nullable Slot live(@Nullable Slot slot) {
		return (slot != null && this.cacheTime.get() < slot.expiresAt) ? slot : null;
	}

	/**
	 * Adds a slot under a key that has no slot, or only an expired one, after setting it
	 * to expire a retention and a half after store time {@code shownAt}.
	 * @return whether it was added (false: a live slot is held under the key)
	 */
	private boolean add(Object key, Slot slot, long shownAt) {
		slot.expiresAt = expiryOf(slot.limit(), shownAt);
		boolean added = holder(key, slot) == slot;
		// Lowered after the slot is in the map: a sweep that starts before this either
		// sees the slot or is followed by this.
		lowerNextExpiry(slot.expiresAt);
		return added;
	}

	/**
	 * Returns the live slot held under a key, putting {@code slot}, a new one, there
	 * first if the key has none or only an expired one.
	 */
	private Slot holder(Object key, Slot slot) {
		Slot present = this.map.putIfAbsent(key, slot);
		if (present == null) {
			return slot;
		}
		return (live(present) != null) ? present : holder(key, slot, slot.expiresAt);
	}

	/**
	 * Returns the live slot held under a key, putting {@code slot} there, to expire at
	 * {@code expiresAt}, if the key has none, only an expired one, or {@code slot}
	 * itself. Decided under the lock of the key's map bin, where a sweep checks a slot's
	 * expiry again before it takes it out: a slot whose expiry this moves on is never
	 * swept out on the expiry it had.
	 */
	private Slot holder(Object key, Slot slot, long expiresAt) {
		Slot[] replaced = new Slot[1];
		Slot held = this.map.compute(key, (ignored, present) -> {
			if (present != null && present != slot && live(present) != null) {
				return present;
			}
			slot.expiresAt = expiresAt;
			replaced[0] = (present != slot) ? present : null;
			return slot;
		});
		if (replaced[0] != null) {
			forgetRecent(replaced[0]);
		}
		return held;
	}

	/**
	 * Finds the live slot of a keyed limit, or returns {@code null} if none is held.
	 */
	private @Nullable Slot find(KeyedLimit target) {
		Recent shown = this.recent;
		Slot slot = (shown != null && shown.key == target) ? shown.slot : this.map.get(StateKey.of(target));
		return live(slot);
	}

	/**
	 * Forgets a slot that a call found evicted, or reset while another call held it,
	 * before it looks the key up again: should the slot still be in the map or be the
	 * recent key's, the look-up would find it again.
	 */
	private void forgetRetired(KeyedLimit target, Slot slot) {
		this.map.remove(StateKey.of(target), slot);
		forgetRecent(slot);
	}

	/**
	 * Records a call made at {@code now} when the key's last recorded call is half a
	 * retention old, so that it expires no earlier than a retention after its last real
	 * call.
	 */
	private void recordSometimes(Slot slot, KeyedLimit target, long now) {
		if (now >= slot.recordBy) {
			record(slot, target, now);
		}
	}

	/**
	 * Records a call: the slot expires a retention and a half later. Should a sweep have
	 * taken the key out meanwhile, this slot, which the call just used, takes its place
	 * again, so that the call's permits are not forgotten; unless {@link #reset} or an
	 * eviction discarded it, whose fresh state must win over a call that was in flight
	 * (RecentKeyTest).
	 */
	private void record(Slot slot, KeyedLimit target, long now) {
		if (slot.isDiscarded()) {
			return;
		}
		advanceCacheTime(now);
		long shownAt = this.cacheTime.get();
		Object key = StateKey.of(target);
		long expiresAt = expiryOf(slot.limit(), shownAt);
		Slot held = holder(key, slot, expiresAt);
		// A changed limit may have made the expiry earlier than any the last sweep saw.
		lowerNextExpiry(expiresAt);
		if (!slot.recordNext(now + recordInterval(slot.limit()))) {
			// discarded meanwhile: take it out again if this call put it back
			this.map.remove(key, slot);
			return;
		}
		if (held == slot) {
			remember(target, slot);
		}
		else {
			// another slot took the key's place while this one was out of the map
			forgetRecent(slot);
		}
	}

	/**
	 * Holds a slot just added or recorded as the recent key's.
	 */
	private void remember(KeyedLimit target, Slot slot) {
		this.recent = new Recent(target, slot);
		if (slot.isDiscarded()) {
			// reset or an eviction ran meanwhile: it may have cleared the recent key
			// before this write
			forgetRecent(slot);
		}
	}

	/**
	 * Makes sure the slot held as the recent key's, if it is this one, is not handed out
	 * again.
	 */
	private void forgetRecent(Slot slot) {
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

	/**
	 * Half a retention: the longest a key in use goes without recording a call.
	 */
	static long recordInterval(Limit limit) {
		return Math.max(1, limit.retentionMicros() / 2);
	}

	/**
	 * The store time at which a slot of this limit whose last call was recorded at
	 * {@code shownAt} expires: its retention after that call, plus the longest a key in
	 * use goes without recording one.
	 */
	static long expiryOf(Limit limit, long shownAt) {
		long retention = limit.retentionMicros();
		long keep = (retention > Long.MAX_VALUE / 2) ? Long.MAX_VALUE : retention + recordInterval(limit);
		return (shownAt > Long.MAX_VALUE - keep) ? Long.MAX_VALUE : shownAt + keep;
	}

	/**
	 * The key last added or recorded, and its slot.
	 */
	private record Recent(KeyedLimit key, Slot slot) {
	}

	/** What a locked decision on one limit gives. */
	private record Locked(Outcome outcome, @Nullable String leaseId) {
	}

	/**
	 * Builds an {@link InMemoryRateLimiter}.
	 */
	public static final class Builder {

		private long maxKeys = DEFAULT_MAX_KEYS;

		private TimeSource timeSource = TimeSource.system();

		private Executor sweeper = KeyEvictor.BACKGROUND;

		private Builder() {
		}

		/**
		 * Sets the bound on keyed limits held. Beyond it, the keys back to their fresh
		 * state go first, then the keys nearest to it, down to
		 * {@code maxKeys - maxKeys / 16}. So a flood of new keys never hands a client
		 * back its spent permits while a key held carries no information.
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
		 * Sets where sweeps run instead of the shared background thread; for tests
		 * ({@code Runnable::run}: the call that adds a key beyond {@code maxKeys} sweeps
		 * the store itself as it finishes, so that a test sees what the sweep evicted
		 * right after it).
		 * @param sweeper the executor of sweeps
		 * @return this builder
		 */
		Builder sweeper(Executor sweeper) {
			this.sweeper = Objects.requireNonNull(sweeper, "sweeper must not be null");
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
