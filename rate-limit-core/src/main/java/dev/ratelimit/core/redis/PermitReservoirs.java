package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;

/**
 * The local reservoirs of two-tier mode: per state key, the permits this instance took
 * from Redis in advance and has not used yet, and Redis's last refusal; and how a call
 * with one or several limits is served from the reservoirs of its keys.
 */
final class PermitReservoirs {

	/*
	 * A reservoir never holds more than N permits (a fill takes at most N and the call
	 * that triggered it uses at least one of them; a give-back is capped at N), and its
	 * permits lapse (see Reservoir.goodFor): after the limit's window for a bucket or a
	 * sliding log, at the end of the window Redis counted them in for a fixed window or a
	 * sliding window counter, so that a window's permits are never spent in the next one.
	 * The last refusal lets calls that would be refused again be answered without a round
	 * trip. Both hold for the limit they were filled under only: when a call comes with
	 * other parameters (a reloaded configuration, an override), the permits are dropped,
	 * spent as Redis counts them (spent stays spent), and the refusal forgotten.
	 *
	 * A window's end is known twice: by this instance's clock, from the time a fill was
	 * sent (Reservoir.expiresAt, early by the fill's round trip, so that local calls stop
	 * in time), and exactly, by Redis's clock, from the fill's reply (countedUntil). The
	 * second tells what a fill that Redis ran after the boundary finds: the permits held
	 * here, and those the call held or took here, were counted in a window that has
	 * ended. The ones held here lapse; the call's own lapse too, and the script asks the
	 * new window for them again (decide.lua's fillAsk, Claimed.lapsed), so that a call
	 * Redis decides after a boundary spends that window's permits only. A give-back
	 * carries the window of the permits it returns, and one of an ended window is
	 * dropped.
	 *
	 * A call with several limits is served here only if every limit's reservoir serves
	 * it: it takes its cost from each, and gives back what it took if one cannot (the
	 * permits were this instance's all along). The reservoirs that lack permits are
	 * filled together, by one script call (one per hash slot in a cluster), which takes
	 * for each of them between what it lacks and N.
	 *
	 * One fill of a reservoir is on its way at a time. A call that finds it on its way
	 * gives back what it took, waits for it and tries again, so that one fill serves the
	 * calls behind it: a caller that waits blocks, at most its timeout; an asynchronous
	 * caller chains on the fill, so that no thread waits. A call claims the reservoirs it
	 * fills in the order of their keys and never waits while it holds a claim, so that no
	 * two calls wait for each other. No lock is held across a call to Redis: a
	 * reservoir's monitor guards its fields only while they change, and the fill on its
	 * way is a future that any thread may complete (the answer of an asynchronous fill
	 * comes on Lettuce's event loop).
	 *
	 * A reservoir whose callers wait for its fills (a call found one of its last
	 * AHEAD_AFTER_WAIT fills on its way) and that serves a call and is left with fewer
	 * than an eighth of N permits is filled ahead, while its last permits still serve
	 * calls: a fill that needs nothing, which no call waits for, sent while Redis answers
	 * in time. Under load the next fill has then come before the reservoir runs dry, and
	 * callers rarely wait for Redis (a wait parks a thread and wakes it). Such a fill
	 * takes at most N less what is left, so that a reservoir still holds at most N, and
	 * Redis sees a fill per 7N/8 calls rather than per N; a key whose calls never wait
	 * (one caller at a time) keeps one per N, as its caller would wait for the fill ahead
	 * all the same. It is not done once Redis has granted a fill less than it asked for,
	 * or had nothing left after it: the limit is nearly spent, and filling ahead would
	 * ask Redis once per call for a permit or none.
	 */

	private static final long MAX_RESERVOIRS = 100_000;

	/**
	 * A reservoir is filled ahead while a call found one of its last this many fills on
	 * its way.
	 */
	static final long AHEAD_AFTER_WAIT = 8;

	private final long size;

	/** How long a reservoir is kept after the last access shown to Caffeine. */
	static final Duration KEEP = Duration.ofHours(1);

	/**
	 * How often a reservoir in use shows Caffeine an access: once a minute, so that it is
	 * kept at least 59 minutes after its last call.
	 */
	static final long RECORD_EVERY_NANOS = Duration.ofMinutes(1).toNanos();

	/*
	 * A call finds its reservoir without Caffeine's bookkeeping (a recorded read, with
	 * expire-after-access, writes the entry's access time and buffers the read for the
	 * size policy: 1.5% of an HTTP instance's CPU in two-tier mode, for one hot key), and
	 * shows Caffeine an access once a minute per reservoir.
	 */
	private final Cache<Place, Reservoir> reservoirs;

	private final Policy<Place, Reservoir> policy;

	private final Ticker ticker;

	PermitReservoirs(long size) {
		this(size, Ticker.systemTicker());
	}

	/**
	 * Creates the reservoirs of a backend, with the clock that tells when one was last
	 * used: the system's, or a test's.
	 */
	PermitReservoirs(long size, Ticker ticker) {
		this.size = size;
		this.ticker = ticker;
		this.reservoirs = Caffeine.newBuilder()
			.maximumSize(MAX_RESERVOIRS)
			.expireAfterAccess(KEEP)
			.ticker(ticker)
			.build();
		this.policy = this.reservoirs.policy();
	}

	/**
	 * Returns the most permits one fill takes from Redis.
	 */
	long size() {
		return this.size;
	}

	/**
	 * Returns whether a call can be served from reservoirs: every limit is a token
	 * bucket, a policing leaky bucket, a fixed window, a sliding window counter or a
	 * sliding window log, without a wait and without a penalty (a concurrency limit needs
	 * its lease in Redis, a wait its place in Redis's queue, a penalty Redis's clock),
	 * and the cost is one that a fill can grant.
	 * @param limits the call's limits
	 * @param cost the permits the call takes
	 * @return whether the reservoirs may serve it
	 */
	boolean isEligible(List<KeyedLimit> limits, long cost) {
		if (cost <= 0 || cost > this.size || limits.isEmpty()) {
			return false;
		}
		for (int i = 0; i < limits.size(); i++) {
			if (!isEligible(limits.get(i).limit(), cost)) {
				return false;
			}
		}
		return true;
	}

	private static boolean isEligible(Limit limit, long cost) {
		boolean algorithm = switch (limit.algorithm()) {
			case TOKEN_BUCKET, FIXED_WINDOW, SLIDING_WINDOW_COUNTER, SLIDING_WINDOW_LOG -> true;
			case LEAKY_BUCKET -> limit.mode() == LeakMode.POLICE;
			case CONCURRENCY -> false;
		};
		return algorithm && cost <= limit.capacity() && limit.penaltyMicros() == 0 && limit.maxWaitMicros() < 0;
	}

	Reservoir reservoir(KeyedLimit target) {
		Place place = Place.of(target);
		Reservoir found = this.policy.getIfPresentQuietly(place);
		if (found == null) {
			return this.reservoirs.get(place, (p) -> new Reservoir(this.size, this.ticker.read()));
		}
		long now = this.ticker.read();
		if (now - found.shownAt >= RECORD_EVERY_NANOS) {
			found.shownAt = now;
			this.reservoirs.getIfPresent(place);
		}
		return found;
	}

	void forget(KeyedLimit target) {
		this.reservoirs.invalidate(Place.of(target));
	}

	void forgetAll() {
		this.reservoirs.invalidateAll();
	}

	/**
	 * Returns a call's limits as the reservoirs see them: each distinct state once.
	 * @param limits the call's limits, all {@link #isEligible eligible}
	 * @param cost the permits the call takes
	 * @return the call
	 */
	Call call(List<KeyedLimit> limits, long cost) {
		int count = limits.size();
		if (count == 1) {
			KeyedLimit target = limits.get(0);
			return new Call(new KeyedLimit[] { target }, new Place[] { Place.of(target) },
					new Reservoir[] { reservoir(target) }, new int[] { 0 }, cost);
		}
		KeyedLimit[] targets = new KeyedLimit[count];
		Place[] places = new Place[count];
		int[] index = new int[count];
		int distinct = 0;
		for (int i = 0; i < count; i++) {
			KeyedLimit target = limits.get(i);
			Place place = Place.of(target);
			int known = -1;
			for (int j = 0; j < distinct && known < 0; j++) {
				if (places[j].equals(place)) {
					known = j;
				}
			}
			if (known < 0) {
				known = distinct++;
				targets[known] = target;
				places[known] = place;
			}
			index[i] = known;
		}
		Reservoir[] found = new Reservoir[distinct];
		for (int j = 0; j < distinct; j++) {
			found[j] = reservoir(targets[j]);
		}
		return new Call(Arrays.copyOf(targets, distinct), Arrays.copyOf(places, distinct), found, index, cost);
	}

	/**
	 * Where a reservoir belongs: the state of a keyed limit in Redis, which its policy,
	 * client key, name and algorithm name (as {@link RedisKeys#key} does, without hashing
	 * the client key on every call), never the limit's other parameters.
	 *
	 * @param policy the policy
	 * @param key the client key
	 * @param name the limit's name
	 * @param algorithm the limit's algorithm
	 */
	record Place(String policy, String key, String name, Algorithm algorithm) implements Comparable<Place> {

		static Place of(KeyedLimit target) {
			return new Place(target.policy(), target.key(), target.name(), target.limit().algorithm());
		}

		@Override
		public int compareTo(Place other) {
			int order = this.policy.compareTo(other.policy);
			if (order == 0) {
				order = this.key.compareTo(other.key);
			}
			if (order == 0) {
				order = this.name.compareTo(other.name);
			}
			return (order != 0) ? order : this.algorithm.compareTo(other.algorithm);
		}

		// written out rather than generated: a place is made, hashed and compared on
		// every call
		@Override
		public boolean equals(Object other) {
			if (this == other) {
				return true;
			}
			return other instanceof Place that && this.key.equals(that.key) && this.name.equals(that.name)
					&& this.policy.equals(that.policy) && this.algorithm == that.algorithm;
		}

		@Override
		public int hashCode() {
			int hash = this.key.hashCode();
			hash = 31 * hash + this.name.hashCode();
			hash = 31 * hash + this.policy.hashCode();
			return 31 * hash + this.algorithm.hashCode();
		}

	}

	/**
	 * One call's distinct keyed limits, their places and reservoirs.
	 *
	 * @param targets the distinct keyed limits
	 * @param places their places
	 * @param reservoirs their reservoirs
	 * @param index for each limit of the call, the place of its target
	 * @param cost the permits the call takes from each
	 */
	record Call(KeyedLimit[] targets, Place[] places, Reservoir[] reservoirs, int[] index, long cost) {

		/**
		 * Returns the call's statuses, one per limit in the order given, from the
		 * statuses of its targets.
		 */
		List<LimitStatus> statuses(LimitStatus[] byTarget) {
			if (this.index.length == 1) {
				return List.of(byTarget[0]);
			}
			List<LimitStatus> statuses = new ArrayList<>(this.index.length);
			for (int i : this.index) {
				statuses.add(byTarget[i]);
			}
			return statuses;
		}

		/**
		 * Returns the marks of a call's statuses, in the order of its limits: where its
		 * reservoirs counted the permits it took (the end of their window by Redis's
		 * clock, {@link Took#countedUntil}), which a refund gives back against.
		 */
		long[] marks(long[] byTarget) {
			long[] marks = new long[this.index.length];
			for (int i = 0; i < marks.length; i++) {
				marks[i] = byTarget[this.index[i]];
			}
			return marks;
		}

		/**
		 * Returns the marks of the targets a call took its cost from.
		 */
		long[] marks(Step[] steps) {
			long[] byTarget = new long[steps.length];
			for (int j = 0; j < steps.length; j++) {
				if (steps[j] instanceof Took took) {
					byTarget[j] = took.countedUntil();
				}
			}
			return marks(byTarget);
		}

	}

	/**
	 * Returns what a call does next with the reservoirs of its keys: served or refused
	 * here, or wait for the fill on its way, or (when it may) fill the reservoirs that
	 * lack permits itself.
	 * @param call the call
	 * @param now the time
	 * @param mayFill whether the call may fill reservoirs; if not, a call that must ask
	 * Redis gets {@code null}
	 * @param mayFillAhead whether a call served here may start a fill of the reservoirs
	 * it left low ({@link Answered#ahead()}): Redis answers in time
	 * @return the call's turn, or {@code null}
	 */
	@Nullable Turn take(Call call, long now, boolean mayFill, boolean mayFillAhead) {
		int count = call.targets.length;
		long cost = call.cost;
		LimitStatus[] statuses = new LimitStatus[count];
		Step[] steps = new Step[count];
		boolean lacking = false;
		for (int j = 0; j < count; j++) {
			Step step = call.reservoirs[j].step(call.targets[j], cost, now, false);
			steps[j] = step;
			if (step instanceof Took took) {
				statuses[j] = took.status();
				continue;
			}
			if (step instanceof Refused || step instanceof Busy) {
				// Redis would refuse this call, or another call's fill decides it: what
				// this call took goes back at once
				giveBack(call, steps, now);
				return (step instanceof Busy busy) ? new AwaitFill(busy.fill()) : refusal(call, steps, now);
			}
			lacking = true;
		}
		if (!lacking) {
			return new Answered(call.statuses(statuses), mayFillAhead ? ahead(call, steps, now) : null,
					call.marks(steps));
		}
		if (!mayFill) {
			giveBack(call, steps, now);
			return null;
		}
		Integer[] order = new Integer[count];
		for (int j = 0; j < count; j++) {
			order[j] = j;
		}
		Arrays.sort(order, (a, b) -> call.places[a].compareTo(call.places[b]));
		boolean claimed = false;
		for (int j : order) {
			if (!(steps[j] instanceof Lacking)) {
				continue;
			}
			Step step = call.reservoirs[j].step(call.targets[j], cost, now, true);
			steps[j] = step;
			if (step instanceof Took took) {
				statuses[j] = took.status();
			}
			else if (step instanceof Claimed) {
				claimed = true;
			}
			else {
				release(call, steps, now);
				giveBack(call, steps, now);
				return (step instanceof Busy busy) ? new AwaitFill(busy.fill()) : refusal(call, steps, now);
			}
		}
		if (!claimed) {
			return new Answered(call.statuses(statuses), mayFillAhead ? ahead(call, steps, now) : null,
					call.marks(steps));
		}
		// the reservoirs that served the call are topped up by the same fill when no
		// other fill is on its way to them: a call's reservoirs then run dry together,
		// and one script call fills them all again
		Claimed[] claims = new Claimed[count];
		for (int j = 0; j < count; j++) {
			if (steps[j] instanceof Claimed claim) {
				claims[j] = claim;
			}
			else if (steps[j] instanceof Took took) {
				claims[j] = call.reservoirs[j].topUp(call.targets[j], took, cost);
			}
		}
		return new Fill(call, steps, claims, statuses, now);
	}

	/**
	 * Returns the fill ahead of the reservoirs a call that they served left low, or
	 * {@code null} if none is: a fill of its own, which uses nothing and needs nothing.
	 */
	private static @Nullable Fill ahead(Call call, Step[] steps, long now) {
		int count = call.targets.length;
		Claimed[] claims = null;
		for (int j = 0; j < count; j++) {
			// the common case, a reservoir with permits to spare, takes no lock again
			Claimed claim = (steps[j] instanceof Took took && took.low()) ? call.reservoirs[j].ahead(call.targets[j])
					: null;
			if (claim != null) {
				if (claims == null) {
					claims = new Claimed[count];
				}
				claims[j] = claim;
			}
		}
		if (claims == null) {
			return null;
		}
		Step[] none = new Step[count];
		Arrays.fill(none, Lacking.INSTANCE);
		Call own = new Call(call.targets, call.places, call.reservoirs, call.index, 0);
		return new Fill(own, none, claims, new LimitStatus[count], now);
	}

	/**
	 * Gives back to their reservoirs the permits a call took ({@link Took}).
	 */
	private static void giveBack(Call call, Step[] steps, long now) {
		for (int j = 0; j < steps.length; j++) {
			if (steps[j] instanceof Took took) {
				call.reservoirs[j].giveBack(call.targets[j], call.cost, took.countedUntil(), now);
				steps[j] = Lacking.INSTANCE;
			}
		}
	}

	/**
	 * Ends the fills a call claimed without asking Redis, their permits given back.
	 */
	private static void release(Call call, Step[] steps, long now) {
		for (int j = 0; j < steps.length; j++) {
			if (steps[j] instanceof Claimed claim) {
				call.reservoirs[j].end(call.targets[j], claim, 0, now);
				steps[j] = Lacking.INSTANCE;
			}
		}
	}

	/**
	 * Returns the answer to a call that a remembered refusal rejects: the refusals, and
	 * for the other limits what they hold.
	 */
	private static Answered refusal(Call call, Step[] steps, long now) {
		LimitStatus[] statuses = new LimitStatus[steps.length];
		for (int j = 0; j < steps.length; j++) {
			statuses[j] = (steps[j] instanceof Refused refused) ? refused.status()
					: call.reservoirs[j].status(call.targets[j], now);
		}
		return new Answered(call.statuses(statuses));
	}

	/**
	 * What a call does next with the reservoirs of its keys.
	 */
	sealed interface Turn permits Answered, Fill, AwaitFill {

	}

	/**
	 * Answered here: from the permits held, or refused as Redis refused the last fill of
	 * as many permits.
	 *
	 * @param statuses the statuses to report, one per limit of the call
	 * @param ahead the fill ahead of the reservoirs the call left low, to send without
	 * waiting for it, or {@code null}
	 */
	record Answered(List<LimitStatus> statuses, @Nullable Fill ahead, long @Nullable [] marks) implements Turn {

		Answered(List<LimitStatus> statuses) {
			this(statuses, null, null);
		}

	}

	/**
	 * Another call's fill is on its way: try again once it has ended.
	 *
	 * @param fill completed (never exceptionally) once that fill has ended
	 */
	record AwaitFill(CompletableFuture<Void> fill) implements Turn {

	}

	/**
	 * Redis's answer to one key of a fill.
	 *
	 * @param outcome the key's outcome, the permits granted as its mark
	 * @param redisNow the script's time, Redis's clock in µs
	 */
	record FillReply(ScriptReply.KeyOutcome outcome, long redisNow) {

	}

	/**
	 * This call fills the reservoirs of {@link #targets()}: it asks Redis, for each, for
	 * between its {@link #needs() need} and its {@link #wants() want}, then applies the
	 * answer with {@link #filled}, or, if Redis was not asked or did not answer,
	 * {@link #abandon}s it. Either ends the fill, so that the calls waiting for it try
	 * again.
	 */
	static final class Fill implements Turn {

		private final Call call;

		/** Per target: {@link Took} if the call took its cost there. */
		private final Step[] steps;

		/** Per target: the fill of its reservoir this call claimed, or {@code null}. */
		private final @Nullable Claimed[] claims;

		private final LimitStatus[] statuses;

		/** Per target: where the permits the call took there are counted (its mark). */
		private final long[] countedUntil;

		private final long now;

		/** The places, in the call's targets, of the reservoirs this fill fills. */
		private final int[] filling;

		private boolean ended;

		Fill(Call call, Step[] steps, @Nullable Claimed[] claims, LimitStatus[] statuses, long now) {
			this.call = call;
			this.steps = steps;
			this.claims = claims;
			this.statuses = statuses;
			this.countedUntil = new long[steps.length];
			this.now = now;
			int count = 0;
			for (Claimed claim : claims) {
				if (claim != null) {
					count++;
				}
			}
			this.filling = new int[count];
			for (int j = 0, k = 0; j < claims.length; j++) {
				if (claims[j] != null) {
					this.filling[k++] = j;
				}
			}
		}

		/**
		 * Returns the keyed limits to fill.
		 */
		List<KeyedLimit> targets() {
			List<KeyedLimit> targets = new ArrayList<>(this.filling.length);
			for (int j : this.filling) {
				targets.add(this.call.targets[j]);
			}
			return targets;
		}

		/**
		 * Returns, for each of {@link #targets()}, the permits Redis must grant at least:
		 * what its reservoir lacks for the call, or 0 for one that served it and is only
		 * topped up.
		 */
		long[] needs() {
			long[] needs = new long[this.filling.length];
			for (int k = 0; k < this.filling.length; k++) {
				needs[k] = claim(k).need();
			}
			return needs;
		}

		/**
		 * Returns, for each of {@link #targets()}, the most permits Redis may grant.
		 */
		long[] wants() {
			long[] wants = new long[this.filling.length];
			for (int k = 0; k < this.filling.length; k++) {
				wants[k] = claim(k).want();
			}
			return wants;
		}

		/**
		 * Returns, for each of {@link #targets()}, the permits of the call's own there
		 * (see {@link Claimed#own()}).
		 */
		long[] owns() {
			long[] owns = new long[this.filling.length];
			for (int k = 0; k < this.filling.length; k++) {
				owns[k] = claim(k).own();
			}
			return owns;
		}

		/**
		 * Returns, for each of {@link #targets()}, when, by Redis's clock, the window of
		 * the call's own permits there ends (see {@link Claimed#countedUntil()}).
		 */
		long[] countedUntils() {
			long[] ends = new long[this.filling.length];
			for (int k = 0; k < this.filling.length; k++) {
				ends[k] = claim(k).countedUntil();
			}
			return ends;
		}

		private Claimed claim(int k) {
			return Objects.requireNonNull(this.claims[this.filling[k]]);
		}

		/**
		 * Applies Redis's answers and ends the fill: with every target granted what it
		 * needs (and the call's own permits there again if their window had ended when
		 * Redis ran the fill), the call is allowed and each reservoir keeps what its
		 * grant left after the call; else the call is refused, what it took goes back
		 * (unless its window had ended), and each reservoir keeps what was granted to it
		 * all the same (a cluster's slot that answered before another refused), its
		 * refusal remembered if Redis refused it.
		 * @param replies Redis's answer for each of {@link #targets()}; {@code null} for
		 * a target Redis was not asked about
		 * @return the statuses to report, one per limit of the call
		 */
		synchronized List<LimitStatus> filled(@Nullable FillReply[] replies) {
			boolean allowed = true;
			for (int k = 0; k < this.filling.length; k++) {
				FillReply reply = replies[k];
				Claimed claim = claim(k);
				allowed &= reply != null && reply.outcome().allowed()
						&& reply.outcome().mark() >= claim.need() + claim.lapsed(reply.redisNow());
			}
			boolean[] answered = new boolean[this.steps.length];
			for (int k = 0; k < this.filling.length; k++) {
				int j = this.filling[k];
				Claimed claim = claim(k);
				this.claims[j] = null;
				Reservoir reservoir = this.call.reservoirs[j];
				FillReply reply = replies[k];
				KeyedLimit target = this.call.targets[j];
				if (reply == null) {
					reservoir.end(target, claim, 0, this.now);
				}
				else {
					// what the call took here is the claim's own: the reservoir keeps it,
					// or gives it back, or lets it lapse
					Took took = reservoir.filled(target, claim, allowed ? this.call.cost : 0, reply.outcome(),
							reply.redisNow(), this.now);
					this.statuses[j] = took.status();
					this.countedUntil[j] = took.countedUntil();
					answered[j] = true;
				}
			}
			this.ended = true;
			for (int j = 0; j < this.steps.length; j++) {
				if (!allowed && !answered[j] && this.steps[j] instanceof Took took) {
					this.call.reservoirs[j].giveBack(this.call.targets[j], this.call.cost, took.countedUntil(),
							this.now);
					this.steps[j] = Lacking.INSTANCE;
					this.statuses[j] = null;
				}
				if (this.statuses[j] == null) {
					this.statuses[j] = this.call.reservoirs[j].status(this.call.targets[j], this.now);
				}
				if (!answered[j] && this.steps[j] instanceof Took took) {
					this.countedUntil[j] = took.countedUntil();
				}
			}
			return this.call.statuses(this.statuses);
		}

		/**
		 * Returns the marks of the call's statuses once {@link #filled} has answered it:
		 * where each reservoir counts the permits the call took.
		 */
		synchronized long[] marks() {
			return this.call.marks(this.countedUntil);
		}

		/**
		 * Ends a fill whose answer never came: the permits the call held and took go
		 * back, and the calls waiting for the fill try again; does nothing once the fill
		 * has ended.
		 */
		synchronized void abandon() {
			if (this.ended) {
				return;
			}
			this.ended = true;
			for (int j = 0; j < this.claims.length; j++) {
				Claimed claim = this.claims[j];
				if (claim != null) {
					this.call.reservoirs[j].end(this.call.targets[j], claim, 0, this.now);
					this.claims[j] = null;
				}
			}
			giveBack(this.call, this.steps, this.now);
		}

	}

	/**
	 * What one reservoir did for a call.
	 */
	sealed interface Step permits Took, Refused, Busy, Claimed, Lacking {

	}

	/**
	 * Took the call's cost.
	 *
	 * @param status the status to report
	 * @param low whether the reservoir was left low enough to be filled ahead
	 * @param countedUntil when, by Redis's clock, the window the permits were counted in
	 * ends (see {@link Reservoir#countedUntil})
	 */
	record Took(LimitStatus status, boolean low, long countedUntil) implements Step {

	}

	/** Refused as Redis refused the last fill of as many permits. */
	record Refused(LimitStatus status) implements Step {

	}

	/** Another call's fill is on its way. */
	record Busy(CompletableFuture<Void> fill) implements Step {

	}

	/**
	 * The call fills this reservoir: it holds the permits the reservoir had, and needs
	 * the rest from Redis.
	 *
	 * @param held the permits taken from the reservoir for the fill
	 * @param need the permits Redis must grant at least
	 * @param want the permits Redis may grant at most
	 * @param own the permits of the call's own here: those it held for its cost, or those
	 * it took here before topping the reservoir up; 0 for a fill ahead
	 * @param countedUntil when, by Redis's clock, the window {@code own} was counted in
	 * ends (see {@link Reservoir#countedUntil})
	 * @param done completed once the fill has ended
	 */
	record Claimed(long held, long need, long want, long own, long countedUntil,
			CompletableFuture<Void> done) implements Step {

		/**
		 * Returns the permits of the call's own that lapsed before Redis ran the fill:
		 * all of them if their window had ended by then, which the fill then asks for
		 * again (the script's {@code fillAsk}, the same rule); else none.
		 * @param redisNow the script's time
		 * @return the lapsed permits
		 */
		long lapsed(long redisNow) {
			return (this.own > 0 && redisNow >= this.countedUntil) ? this.own : 0;
		}

	}

	/** Lacks permits, and nobody fills it. */
	enum Lacking implements Step {

		INSTANCE

	}

	/**
	 * The unused permits of one key. Its fields change under its monitor, never across a
	 * call to Redis; {@link #step} claims at most one fill at a time, and every call that
	 * finds it on its way waits for its {@link #end}. Time ({@code now}) is this
	 * instance's clock in µs.
	 */
	static final class Reservoir {

		private final long size;

		/**
		 * When a call last showed Caffeine an access to this reservoir (its ticker's
		 * nanoseconds); read and written racily, at worst showing one access more.
		 */
		volatile long shownAt;

		/** A reservoir left with fewer permits than this is filled ahead. */
		private final long lowWater;

		/** The fill on its way to Redis, or {@code null}. */
		private @Nullable CompletableFuture<Void> fill;

		/** The limit of the last fill, or {@code null} before the first. */
		private @Nullable Limit filledUnder;

		private long permits;

		/** When, by this instance's clock, the permits held lapse. */
		private long expiresAt;

		/**
		 * When, by Redis's clock, the window the permits held were counted in ends:
		 * {@link Long#MAX_VALUE} for a limit without windows (a bucket, a sliding log),
		 * {@link Long#MIN_VALUE} while no grant says.
		 */
		private long countedUntil = Long.MIN_VALUE;

		/**
		 * What Redis had left at the last fill, for the status of calls served locally.
		 */
		private long redisRemaining;

		private long resetAt;

		/**
		 * Until when Redis refuses {@link #refusedNeed} permits or more: the time of its
		 * last refusal plus that refusal's retry-after; 0 after a grant.
		 */
		private long refusedUntil;

		/** The permits the last refused fill asked for. */
		private long refusedNeed;

		/** The fills claimed so far. */
		private long fills;

		/** The number of the last fill a call found on its way. */
		private long waitedFor = -AHEAD_AFTER_WAIT - 1;

		/**
		 * Whether Redis granted the last fill less than it asked for, or refused it, or
		 * had nothing left after it: the limit is nearly spent, so that the reservoir is
		 * not filled ahead.
		 */
		private boolean scarce;

		Reservoir(long size, long shownAt) {
			this.size = size;
			this.lowWater = Math.max(1, size / 8);
			this.shownAt = shownAt;
		}

		/**
		 * Serves a call from this reservoir if it can; else says whether Redis's last
		 * refusal answers it, or another call's fill is on its way, or (if the call may
		 * claim it) claims the fill for the call, the permits held here taken along.
		 * @param target the keyed limit
		 * @param cost the permits the call takes
		 * @param now the time
		 * @param claim whether the call may claim a fill
		 * @return what this reservoir did
		 */
		synchronized Step step(KeyedLimit target, long cost, long now, boolean claim) {
			LimitStatus served = tryTake(target, cost, now);
			if (served != null) {
				return new Took(served, isLow(), this.countedUntil);
			}
			LimitStatus refused = refusal(target, shortfall(cost), now);
			if (refused != null) {
				return new Refused(refused);
			}
			CompletableFuture<Void> onItsWay = this.fill;
			if (onItsWay != null) {
				this.waitedFor = this.fills;
				return new Busy(onItsWay);
			}
			if (!claim) {
				return Lacking.INSTANCE;
			}
			long held = this.permits;
			this.permits = 0;
			return claim(held, cost - held, Math.max(cost - held, most(target)), held, this.countedUntil);
		}

		/**
		 * Claims the fill of this reservoir, under its monitor, no other being on its
		 * way.
		 */
		private Claimed claim(long held, long need, long want, long own, long ownCountedUntil) {
			CompletableFuture<Void> started = new CompletableFuture<>();
			this.fill = started;
			this.fills++;
			return new Claimed(held, need, want, own, ownCountedUntil, started);
		}

		/**
		 * Returns whether this reservoir is to be filled ahead: fewer than
		 * {@code lowWater} permits left, a call waited for one of its last
		 * {@value PermitReservoirs#AHEAD_AFTER_WAIT} fills, no fill on its way, something
		 * filled under its limit and the limit not nearly spent; under its monitor.
		 */
		private boolean isLow() {
			return this.fill == null && this.permits < this.lowWater && !this.scarce && this.filledUnder != null
					&& this.fills - this.waitedFor <= AHEAD_AFTER_WAIT;
		}

		/**
		 * Returns the most permits a fill of this reservoir may take: its size, or less
		 * for a limit whose capacity is smaller (a fill is never granted more), so that a
		 * fill granted less than it asked for tells of a limit nearly spent.
		 */
		private long most(KeyedLimit target) {
			return Math.min(this.size, target.limit().capacity());
		}

		/**
		 * Claims a fill ahead for a call that took its cost here and left this reservoir
		 * {@link #isLow low} (still so: another call may have claimed it since), up to
		 * the most a fill may take.
		 * @param target the keyed limit the call took its cost under
		 * @return the claim, or {@code null}
		 */
		synchronized @Nullable Claimed ahead(KeyedLimit target) {
			long room = most(target) - this.permits;
			return (isLow() && room > 0) ? claim(0, 0, room, 0, this.countedUntil) : null;
		}

		/**
		 * Claims a fill that tops this reservoir up, for a call that took its cost here:
		 * up to the most a fill may take less that cost, so that the cost still fits
		 * should the call be refused and give it back; {@code null} if another fill is on
		 * its way or there is no room. What the call took is the claim's own.
		 * @param target the keyed limit the call took its cost under
		 * @param took what the call took here
		 * @param cost the permits the call took
		 * @return the claim, or {@code null}
		 */
		synchronized @Nullable Claimed topUp(KeyedLimit target, Took took, long cost) {
			long room = most(target) - this.permits - cost;
			return (this.fill == null && room > 0) ? claim(0, 0, room, cost, took.countedUntil()) : null;
		}

		/**
		 * Ends a fill without a grant: the permits the call held come back (unless they
		 * lapsed meanwhile), and the calls waiting for the fill try again.
		 * @param target the keyed limit
		 * @param claim the fill
		 * @param granted permits Redis granted that the call does not use
		 * @param now the time
		 */
		void end(KeyedLimit target, Claimed claim, long granted, long now) {
			synchronized (this) {
				add(target, claim.held() + granted, claim.countedUntil(), now);
				if (this.fill == claim.done()) {
					this.fill = null;
				}
			}
			claim.done().complete(null);
		}

		/**
		 * Serves a call from this reservoir, after its permits lapsed if their time has
		 * passed or its limit changed.
		 * @param target the keyed limit
		 * @param cost the permits the call takes
		 * @param now the time
		 * @return the status to report if the reservoir had enough permits, else
		 * {@code null}
		 */
		synchronized @Nullable LimitStatus tryTake(KeyedLimit target, long cost, long now) {
			lapse(target, now);
			if (this.permits < cost) {
				return null;
			}
			this.permits -= cost;
			return new LimitStatus(target, true, remaining(target, this.redisRemaining), 0, resetAfter(now), 0, false);
		}

		/**
		 * Returns the status of a limit that this call neither took from nor was refused
		 * by: what is left here and in Redis.
		 */
		synchronized LimitStatus status(KeyedLimit target, long now) {
			lapse(target, now);
			return new LimitStatus(target, true, remaining(target, this.redisRemaining), 0, resetAfter(now), 0, false);
		}

		/**
		 * Gives back permits a call took and did not use, unless they lapsed meanwhile
		 * (by this clock, or with the window they were counted in); never more than the
		 * reservoir size is held.
		 * @param target the keyed limit
		 * @param cost the permits
		 * @param countedUntil the end of their window, as {@link Took#countedUntil} says
		 * @param now the time
		 */
		synchronized void giveBack(KeyedLimit target, long cost, long countedUntil, long now) {
			add(target, cost, countedUntil, now);
		}

		private void add(KeyedLimit target, long permits, long countedUntil, long now) {
			if (permits == 0) {
				return;
			}
			Limit filledUnder = this.filledUnder;
			if (filledUnder == null || !filledUnder.equals(target.limit()) || this.expiresAt <= now
					|| countedUntil != this.countedUntil) {
				return;
			}
			this.permits = Math.min(this.size, this.permits + permits);
		}

		/**
		 * Returns the permits left for a status: those held here and Redis's, at most the
		 * limit's capacity (a bucket refills while this reservoir holds what it took from
		 * it before).
		 */
		private long remaining(KeyedLimit target, long redisRemaining) {
			return Math.min(target.limit().capacity(), this.permits + redisRemaining);
		}

		private void lapse(KeyedLimit target, long now) {
			Limit filledUnder = this.filledUnder;
			if (filledUnder != null && filledUnder != target.limit() && !filledUnder.equals(target.limit())) {
				this.permits = 0;
				this.countedUntil = Long.MIN_VALUE;
				this.refusedUntil = 0;
				this.scarce = false;
				this.filledUnder = null;
			}
			if (this.expiresAt <= now) {
				this.permits = 0;
			}
		}

		/**
		 * Returns the permits a fill must ask Redis for so that a call can be served;
		 * after {@link #tryTake}.
		 * @param cost the permits the call takes
		 * @return the permits this reservoir lacks
		 */
		synchronized long shortfall(long cost) {
			return cost - this.permits;
		}

		/**
		 * Refuses a call here while Redis's last refusal of as many permits holds: a
		 * bucket only refills at its rate and a window's count only falls as it moves on,
		 * so Redis would refuse it too, with the same retry-after less the time since
		 * (exact for the same need, which is why another need still asks Redis). Only a
		 * reset on another instance or a give-back to this key can make Redis allow
		 * sooner; then this refuses at most until the retry-after. Answering here keeps
		 * callers queued on an exhausted key from taking turns at Redis one fill after
		 * another, where those at the back would time out and fall back (by default:
		 * allowed).
		 * @param target the keyed limit
		 * @param need the permits a fill would ask for
		 * @param now the time
		 * @return the refusal to report, or {@code null} if Redis must be asked
		 */
		synchronized @Nullable LimitStatus refusal(KeyedLimit target, long need, long now) {
			if (now >= this.refusedUntil || need != this.refusedNeed) {
				return null;
			}
			return new LimitStatus(target, false, remaining(target, this.redisRemaining), this.refusedUntil - now,
					resetAfter(now), 0, false);
		}

		/**
		 * Applies Redis's answer to this reservoir's part of a fill and ends it: a grant
		 * adds its permits and the call's own, less what the call uses, and clears the
		 * refusal; a refusal gives back the call's own and is remembered for its
		 * retry-after. If Redis ran the fill after the window of the permits held here
		 * ended, they lapse, and so does the call's own (which Redis was then asked for
		 * again).
		 * @param target the keyed limit
		 * @param claim the fill
		 * @param used the permits the call takes: its cost if it is allowed, else 0
		 * @param outcome Redis's answer, with the permits granted as its mark
		 * @param redisNow the script's time
		 * @param now the time the call started
		 * @return the status to report (Redis's, with what this reservoir holds added to
		 * the remaining count) and where the call's permits are counted
		 */
		Took filled(KeyedLimit target, Claimed claim, long used, ScriptReply.KeyOutcome outcome, long redisNow,
				long now) {
			Took status;
			synchronized (this) {
				lapse(target, now);
				this.filledUnder = target.limit();
				if (redisNow >= this.countedUntil) {
					this.permits = 0;
					this.countedUntil = Long.MIN_VALUE;
				}
				long lapsed = claim.lapsed(redisNow);
				long granted = outcome.mark();
				this.scarce = !outcome.allowed() || granted < claim.want() + lapsed || outcome.remaining() <= 0;
				if (granted > 0) {
					this.expiresAt = now + goodFor(target.limit(), outcome);
					this.countedUntil = countedUntil(target.limit(), outcome, redisNow);
					this.refusedUntil = 0;
				}
				else if (!outcome.allowed()) {
					this.refusedUntil = now + outcome.retryAfterMicros();
					this.refusedNeed = claim.need() + lapsed;
				}
				this.redisRemaining = outcome.remaining();
				this.resetAt = now + outcome.resetAfterMicros();
				if (this.expiresAt > now) {
					this.permits = Math.min(this.size, this.permits + claim.own() - lapsed + granted - used);
				}
				if (this.fill == claim.done()) {
					this.fill = null;
				}
				status = new Took(outcome.withRemaining(remaining(target, outcome.remaining())).status(target), false,
						this.countedUntil);
			}
			claim.done().complete(null);
			return status;
		}

		/**
		 * Returns how long permits granted under a limit may be spent: a fixed window's
		 * until the window Redis counted them in ends, a sliding window counter's until
		 * the end of the fixed window its count holds them in (its reset is a window
		 * later), so that a window's permits are never spent in the next; a bucket's or a
		 * sliding log's for the limit's window.
		 */
		static long goodFor(Limit limit, ScriptReply.KeyOutcome outcome) {
			Algorithm algorithm = limit.algorithm();
			if (algorithm == Algorithm.FIXED_WINDOW) {
				return outcome.resetAfterMicros();
			}
			if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
				return Math.max(0, outcome.resetAfterMicros() - limit.windowMicros());
			}
			return limit.windowMicros();
		}

		/**
		 * Returns when, by Redis's clock, the window a grant was counted in ends: for a
		 * fixed window or a sliding window counter, the end {@link #goodFor} counts to
		 * from the script's time; for the others, which have no windows,
		 * {@link Long#MAX_VALUE}.
		 */
		static long countedUntil(Limit limit, ScriptReply.KeyOutcome outcome, long redisNow) {
			Algorithm algorithm = limit.algorithm();
			if (algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
				return redisNow + goodFor(limit, outcome);
			}
			return Long.MAX_VALUE;
		}

		/**
		 * Spends every permit left; for tests.
		 */
		synchronized void drain() {
			this.permits = 0;
		}

		/**
		 * Returns the permits held; for tests.
		 */
		synchronized long permits() {
			return this.permits;
		}

		private long resetAfter(long now) {
			return Math.max(0, this.resetAt - now);
		}

	}

}
