package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PermitReservoirs} without Redis: Redis's answers to fills are given as outcomes;
 * a reservoir serves calls from what a grant left until it is empty or its time has
 * passed, and answers locally while Redis's last refusal of as many permits holds; a call
 * with several limits is served only if every one of their reservoirs serves it.
 */
class PermitReservoirTest {

	private static final long SECOND = 1_000_000;

	/** Ten per second: a window of one second. */
	private static final KeyedLimit TARGET = new KeyedLimit("api", "client", Limit.tokenBucket("10/1s"));

	private final PermitReservoirs reservoirs = new PermitReservoirs(5);

	private final PermitReservoirs.Reservoir reservoir = this.reservoirs.reservoir(TARGET);

	@Test
	void aReservoirInUseIsKeptAnHourAfterItsLastCallAndAnIdleOneIsDropped() {
		AtomicLong nanos = new AtomicLong();
		PermitReservoirs kept = new PermitReservoirs(5, nanos::get);
		PermitReservoirs.Reservoir first = kept.reservoir(TARGET);
		for (int minute = 1; minute <= 150; minute++) {
			nanos.addAndGet(Duration.ofMinutes(1).toNanos());
			assertThat(kept.reservoir(TARGET)).as("minute %d", minute).isSameAs(first);
		}
		// a call each 30 s for 90 minutes: every other one shows an access
		for (int i = 0; i < 180; i++) {
			nanos.addAndGet(Duration.ofSeconds(30).toNanos());
			assertThat(kept.reservoir(TARGET)).isSameAs(first);
		}
		nanos.addAndGet(Duration.ofMinutes(58).toNanos());
		assertThat(kept.reservoir(TARGET)).as("58 minutes idle").isSameAs(first);
		nanos.addAndGet(Duration.ofMinutes(61).toNanos());
		assertThat(kept.reservoir(TARGET)).as("61 minutes idle").isNotSameAs(first);
	}

	@Test
	void anEmptyReservoirServesNothingAndNeedsTheWholeCost() {
		assertThat(this.reservoir.tryTake(TARGET, 1, 0)).isNull();
		assertThat(this.reservoir.shortfall(3)).isEqualTo(3);
		assertThat(this.reservoir.step(TARGET, 3, 0, false)).isEqualTo(PermitReservoirs.Lacking.INSTANCE);
		PermitReservoirs.Claimed claim = (PermitReservoirs.Claimed) this.reservoir.step(TARGET, 3, 0, true);
		assertThat(claim.held()).isZero();
		assertThat(claim.need()).isEqualTo(3);
	}

	@Test
	void servesFromAGrantUntilEmpty() {
		// a fill of 5 for a call of 1: 4 left here
		LimitStatus filled = fill(this.reservoir, TARGET, 1, granted(5, 2), 0);
		assertThat(filled.allowed()).isTrue();
		for (int i = 0; i < 4; i++) {
			assertThat(this.reservoir.tryTake(TARGET, 1, 10)).extracting(LimitStatus::allowed).isEqualTo(true);
		}
		assertThat(this.reservoir.tryTake(TARGET, 1, 10)).isNull();
		assertThat(this.reservoir.shortfall(1)).isEqualTo(1);
	}

	@Test
	void aCallCostingMoreThanIsLeftHoldsWhatIsLeftAndNeedsOnlyTheDifference() {
		fill(this.reservoir, TARGET, 1, granted(5, 0), 0);
		assertThat(this.reservoir.tryTake(TARGET, 6, 10)).isNull();
		assertThat(this.reservoir.shortfall(6)).isEqualTo(2);
		PermitReservoirs.Claimed claim = (PermitReservoirs.Claimed) this.reservoir.step(TARGET, 6, 10, true);
		assertThat(claim.held()).isEqualTo(4);
		assertThat(claim.need()).isEqualTo(2);
		// while the fill is on its way, the permits it holds serve nobody else
		assertThat(this.reservoir.step(TARGET, 1, 10, true)).isInstanceOf(PermitReservoirs.Busy.class);
		// Redis grants 3: the call uses 4 + 2, one is left
		this.reservoir.filled(TARGET, claim, 6, granted(3, 0), 10, 10);
		assertThat(this.reservoir.permits()).isOne();
		assertThat(claim.done()).isDone();
	}

	@Test
	void aTokenBucketsPermitsLapseOnceItsWindowHasPassed() {
		fill(this.reservoir, TARGET, 1, granted(5, 0), 0);
		assertThat(this.reservoir.tryTake(TARGET, 1, SECOND - 1)).isNotNull();
		assertThat(this.reservoir.tryTake(TARGET, 1, SECOND)).isNull();
		assertThat(this.reservoir.shortfall(1)).isEqualTo(1);
	}

	@Test
	void aFixedWindowsPermitsLapseWhenTheWindowTheyWereCountedInEnds() {
		KeyedLimit window = new KeyedLimit("api", "client", Limit.fixedWindow("100/1m"));
		// Redis counted the grant in a window that ends 2 s from now
		fill(this.reservoir, window, 1, new ScriptReply.KeyOutcome(true, 50, 0, 2 * SECOND, 0, false, 5), 0);
		assertThat(this.reservoir.tryTake(window, 1, 2 * SECOND - 1)).isNotNull();
		assertThat(this.reservoir.tryTake(window, 1, 2 * SECOND)).isNull();
	}

	@Test
	void aSlidingWindowCountersPermitsLapseWhenTheFixedWindowTheyWereCountedInEnds() {
		KeyedLimit window = new KeyedLimit("api", "client", Limit.slidingWindowCounter("100/10s"));
		// the counter resets a window after the end of the window that holds the grant:
		// 3 s from now, so that window ends 7 s before
		fill(this.reservoir, window, 1, new ScriptReply.KeyOutcome(true, 50, 0, 13 * SECOND, 0, false, 5), 0);
		assertThat(this.reservoir.tryTake(window, 1, 3 * SECOND - 1)).isNotNull();
		assertThat(this.reservoir.tryTake(window, 1, 3 * SECOND)).isNull();
	}

	@Test
	void aFillAheadThatRedisRunsInTheNextFixedWindowLeavesNoPermitOfTheWindowBefore() {
		// issue 32: reservoirs of 16 on a fixed window of 100/1s
		PermitReservoirs reservoirs = new PermitReservoirs(16);
		KeyedLimit window = new KeyedLimit("api", "client", Limit.fixedWindow("100/1s"));
		PermitReservoirs.Call call = reservoirs.call(List.of(window), 1);
		// Redis counts 16 in the window [0, 1 s) and has 84 left
		contendedFill(reservoirs, call).filled(replies(0, window(16, 84, SECOND)));
		// at 0.999 s a call leaves one permit and sends a fill ahead of 15
		PermitReservoirs.Fill ahead = serveUntilFilledAhead(reservoirs, call, 999_000);
		assertThat(call.reservoirs()[0].permits()).isOne();
		assertThat(ahead.wants()).containsExactly(15);
		// Redis runs it at 1.001 s: 15 permits of the window [1 s, 2 s), 85 left there
		ahead.filled(replies(1_001_000, window(15, 85, SECOND - 1_000)));
		// the permit left from the window before has lapsed with it
		assertThat(call.reservoirs()[0].permits()).isEqualTo(15);
		assertThat(call.reservoirs()[0].status(window, 1_900_000).remaining()).isEqualTo(100);
		assertThat(servedAt(reservoirs, call, 1_900_000)).isEqualTo(15);
	}

	@Test
	void aFillThatRedisRunsInTheNextSlidingWindowLeavesNoPermitOfTheWindowBefore() {
		PermitReservoirs reservoirs = new PermitReservoirs(16);
		KeyedLimit window = new KeyedLimit("api", "client", Limit.slidingWindowCounter("100/1s"));
		PermitReservoirs.Call call = reservoirs.call(List.of(window), 1);
		// the counter resets a window after the end of the fixed window that counts the
		// grant: [0, 1 s)
		contendedFill(reservoirs, call).filled(replies(0, window(16, 84, 2 * SECOND)));
		PermitReservoirs.Fill ahead = serveUntilFilledAhead(reservoirs, call, 999_000);
		// Redis runs it at 1.001 s, in the window [1 s, 2 s): 15 more, the 16 before
		// weighing 15.98 there
		ahead.filled(replies(1_001_000, window(15, 69, 2 * SECOND - 1_000)));
		assertThat(call.reservoirs()[0].permits()).isEqualTo(15);
		assertThat(servedAt(reservoirs, call, 1_900_000)).isEqualTo(15);
	}

	@Test
	void aFixedWindowCallThatHeldPermitsOfTheWindowBeforeTakesItsWholeCostFromTheNext() {
		KeyedLimit window = new KeyedLimit("api", "client", Limit.fixedWindow("100/1s"));
		// 4 left of the window [0, 1 s)
		fill(this.reservoir, window, 1, window(5, 95, SECOND), 0);
		// at 0.999 s a call of 5 holds the 4 and needs 1 more; Redis runs its fill at
		// 1.001 s and grants 5 of the window [1 s, 2 s)
		PermitReservoirs.Claimed claim = (PermitReservoirs.Claimed) this.reservoir.step(window, 5, 999_000, true);
		assertThat(claim.held()).isEqualTo(4);
		LimitStatus status = this.reservoir.filled(window, claim, 5, window(5, 95, SECOND - 1_000), 1_001_000, 999_000)
			.status();
		// the call spends 5 in the window Redis decided it in: it cannot be served from
		// the 4 of the window before and 1 of this one, leaving 4 of this one here
		assertThat(status.allowed()).isTrue();
		assertThat(this.reservoir.permits()).isZero();
		assertThat(status.remaining()).isEqualTo(95);
	}

	@Test
	void noStatusReportsMoreRemainingThanTheLimit() {
		// a bucket refills while a reservoir holds permits taken from it before
		PermitReservoirs reservoirs = new PermitReservoirs(16);
		KeyedLimit bucket = new KeyedLimit("api", "client", Limit.tokenBucket("100/1s"));
		PermitReservoirs.Call call = reservoirs.call(List.of(bucket), 1);
		contendedFill(reservoirs, call).filled(replies(0, granted(16, 84)));
		PermitReservoirs.Fill ahead = serveUntilFilledAhead(reservoirs, call, 500_000);
		// Redis has refilled to 100 and grants 15: 85 left there, 16 here
		List<LimitStatus> statuses = ahead.filled(replies(0, granted(15, 85)));
		assertThat(statuses).allMatch((status) -> status.remaining() <= 100);
		assertThat(call.reservoirs()[0].status(bucket, 500_000).remaining()).isEqualTo(100);
		PermitReservoirs.Answered served = (PermitReservoirs.Answered) reservoirs.take(call, 500_000, false, false);
		assertThat(served.statuses().get(0).remaining()).isLessThanOrEqualTo(100);
	}

	@Test
	void reportsWhatIsLeftHereAndInRedisAsRemaining() {
		LimitStatus filled = fill(this.reservoir, TARGET, 1,
				new ScriptReply.KeyOutcome(true, 6, 0, 300_000, 0, false, 5), 100);
		// Redis has 6 left, this reservoir 4
		assertThat(filled.remaining()).isEqualTo(10);
		assertThat(filled.resetAfterMicros()).isEqualTo(300_000);
		LimitStatus served = this.reservoir.tryTake(TARGET, 1, 200_100);
		assertThat(served.remaining()).isEqualTo(9);
		assertThat(served.resetAfterMicros()).isEqualTo(100_000);
		assertThat(served.retryAfterMicros()).isZero();
	}

	@Test
	void remembersARefusalOfTheSameNeedUntilItsRetryAfter() {
		LimitStatus refused = fill(this.reservoir, TARGET, 2, refused(300_000), 1_000);
		assertThat(refused.allowed()).isFalse();
		LimitStatus again = this.reservoir.refusal(TARGET, 2, 101_000);
		assertThat(again.allowed()).isFalse();
		assertThat(again.retryAfterMicros()).isEqualTo(200_000);
		assertThat(again.remaining()).isEqualTo(1);
		assertThat(this.reservoir.step(TARGET, 2, 101_000, true)).isInstanceOf(PermitReservoirs.Refused.class);
		assertThat(this.reservoir.refusal(TARGET, 2, 300_999)).isNotNull();
		assertThat(this.reservoir.refusal(TARGET, 2, 301_000)).isNull();
	}

	@Test
	void asksRedisAgainForADifferentNeed() {
		fill(this.reservoir, TARGET, 2, refused(300_000), 0);
		assertThat(this.reservoir.refusal(TARGET, 1, 10)).isNull();
		assertThat(this.reservoir.refusal(TARGET, 3, 10)).isNull();
		assertThat(this.reservoir.refusal(TARGET, 2, 10)).isNotNull();
	}

	@Test
	void aGrantEndsTheRememberedRefusal() {
		fill(this.reservoir, TARGET, 2, refused(300_000), 0);
		PermitReservoirs.Claimed claim = new PermitReservoirs.Claimed(0, 1, 5, 0, Long.MIN_VALUE,
				new java.util.concurrent.CompletableFuture<>());
		this.reservoir.filled(TARGET, claim, 1, granted(2, 0), 10, 10);
		assertThat(this.reservoir.refusal(TARGET, 2, 20)).isNull();
	}

	@Test
	void aRefusalGivesBackThePermitsTheCallHeld() {
		fill(this.reservoir, TARGET, 1, granted(2, 0), 0);
		// 1 held here; a call of 3 needs 2 more, which Redis refuses
		LimitStatus refused = fill(this.reservoir, TARGET, 3, refused(100_000), 10);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.remaining()).isEqualTo(2);
		assertThat(this.reservoir.tryTake(TARGET, 1, 20)).isNotNull();
	}

	@Test
	void aChangedLimitDropsThePermitsAndTheRefusalHeldHere() {
		KeyedLimit raised = new KeyedLimit("api", "client", Limit.tokenBucket("100/1s"));
		fill(this.reservoir, TARGET, 1, granted(5, 0), 0);
		// taken from Redis under the old limit: spent there, never served under the new
		// one
		assertThat(this.reservoir.tryTake(raised, 1, 10)).isNull();
		assertThat(this.reservoir.shortfall(1)).isEqualTo(1);
		fill(this.reservoir, raised, 1, granted(5, 0), 20);
		assertThat(this.reservoir.tryTake(raised, 1, 30)).isNotNull();
		this.reservoir.drain();
		fill(this.reservoir, raised, 2, refused(300_000), 40);
		assertThat(this.reservoir.tryTake(TARGET, 2, 50)).isNull();
		assertThat(this.reservoir.refusal(TARGET, 2, 50)).isNull();
		// nor does a give-back of a permit taken under the old limit count under the new
		this.reservoir.giveBack(TARGET, 1, Long.MAX_VALUE, 60);
		assertThat(this.reservoir.permits()).isZero();
	}

	@Test
	void aGiveBackNeverHoldsMoreThanTheReservoirSize() {
		fill(this.reservoir, TARGET, 1, granted(5, 0), 0);
		this.reservoir.giveBack(TARGET, 3, Long.MAX_VALUE, 10);
		assertThat(this.reservoir.permits()).isEqualTo(5);
	}

	@Test
	void aCallWithSeveralLimitsIsServedHereOnlyIfEveryReservoirServesIt() {
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		KeyedLimit global = new KeyedLimit("capacity", "global", Limit.slidingWindowCounter("200/1s"));
		PermitReservoirs.Call call = this.reservoirs.call(List.of(tier, global), 1);
		// both empty: one fill for both, each needing one permit
		PermitReservoirs.Fill fill = (PermitReservoirs.Fill) this.reservoirs.take(call, 0, true, false);
		assertThat(fill.targets()).containsExactly(tier, global);
		assertThat(fill.needs()).containsExactly(1, 1);
		List<LimitStatus> statuses = fill.filled(replies(0, granted(5, 10), window(3, 100, SECOND + SECOND / 2)));
		assertThat(statuses).extracting(LimitStatus::allowed).containsExactly(true, true);
		assertThat(call.reservoirs()[0].permits()).isEqualTo(4);
		assertThat(call.reservoirs()[1].permits()).isEqualTo(2);
		// served here from both
		PermitReservoirs.Answered answered = (PermitReservoirs.Answered) this.reservoirs.take(call, 10, true, false);
		assertThat(answered.statuses()).extracting(LimitStatus::target).containsExactly(tier, global);
		assertThat(call.reservoirs()[0].permits()).isEqualTo(3);
		assertThat(call.reservoirs()[1].permits()).isOne();
		this.reservoirs.take(call, 10, true, false);
		// the global reservoir is empty: it is filled, and the tier's topped up by the
		// same script call, the tier's permit held meanwhile
		fill = (PermitReservoirs.Fill) this.reservoirs.take(call, 10, true, false);
		assertThat(fill.targets()).containsExactly(tier, global);
		assertThat(fill.needs()).containsExactly(0, 1);
		// room for 3 more, and for the permit the call took, should it give it back
		assertThat(fill.wants()).containsExactly(3, 5);
		assertThat(call.reservoirs()[0].permits()).isOne();
		// Redis refuses the global limit: the tier's permit goes back, the refusal is
		// remembered
		statuses = fill.filled(replies(10, granted(0, 10), refused(500_000)));
		assertThat(statuses).extracting(LimitStatus::allowed).containsExactly(true, false);
		assertThat(call.reservoirs()[0].permits()).isEqualTo(2);
		PermitReservoirs.Answered again = (PermitReservoirs.Answered) this.reservoirs.take(call, 20, true, false);
		assertThat(again.statuses()).extracting(LimitStatus::allowed).containsExactly(true, false);
		assertThat(call.reservoirs()[0].permits()).isEqualTo(2);
	}

	@Test
	void aFillTopsUpTheReservoirsThatServedTheCallSoThatTheyRunDryTogether() {
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		KeyedLimit global = new KeyedLimit("capacity", "global", Limit.fixedWindow("200/1s"));
		PermitReservoirs.Call tierOnly = this.reservoirs.call(List.of(tier), 1);
		((PermitReservoirs.Fill) this.reservoirs.take(tierOnly, 0, true, false)).filled(replies(0, granted(3, 10)));
		PermitReservoirs.Call call = this.reservoirs.call(List.of(tier, global), 1);
		PermitReservoirs.Fill fill = (PermitReservoirs.Fill) this.reservoirs.take(call, 0, true, false);
		// the tier served the call (1 left) and may take 3 more (room for the permit the
		// call took, should it be refused); the global window needs 1
		assertThat(fill.needs()).containsExactly(0, 1);
		assertThat(fill.wants()).containsExactly(3, 5);
		List<LimitStatus> statuses = fill.filled(replies(0, granted(3, 10), window(5, 100, SECOND)));
		assertThat(statuses).extracting(LimitStatus::allowed).containsExactly(true, true);
		assertThat(call.reservoirs()[0].permits()).isEqualTo(4);
		assertThat(call.reservoirs()[1].permits()).isEqualTo(4);
	}

	@Test
	void withoutAFillACallThatMustAskRedisTakesNothing() {
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		KeyedLimit burst = new KeyedLimit("burst", "client", Limit.tokenBucket("5/1s", 10));
		PermitReservoirs.Call call = this.reservoirs.call(List.of(tier, burst), 1);
		PermitReservoirs.Fill fill = (PermitReservoirs.Fill) this.reservoirs.take(call, 0, true, false);
		fill.filled(replies(0, granted(5, 10), granted(1, 0)));
		assertThat(this.reservoirs.take(call, 10, false, false)).isNull();
		assertThat(call.reservoirs()[0].permits()).isEqualTo(4);
	}

	@Test
	void aCallThatFindsAFillOnItsWayGivesBackWhatItTookAndWaitsForIt() {
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		KeyedLimit global = new KeyedLimit("capacity", "global", Limit.fixedWindow("200/1s"));
		PermitReservoirs.Call first = this.reservoirs.call(List.of(global), 1);
		PermitReservoirs.Call second = this.reservoirs.call(List.of(tier, global), 1);
		PermitReservoirs.Fill tierFill = (PermitReservoirs.Fill) this.reservoirs
			.take(this.reservoirs.call(List.of(tier), 1), 0, true, false);
		tierFill.filled(replies(0, granted(5, 10)));
		PermitReservoirs.Fill globalFill = (PermitReservoirs.Fill) this.reservoirs.take(first, 0, true, false);
		PermitReservoirs.AwaitFill waiting = (PermitReservoirs.AwaitFill) this.reservoirs.take(second, 0, true, false);
		assertThat(second.reservoirs()[0].permits()).isEqualTo(4);
		assertThat(waiting.fill()).isNotDone();
		globalFill.filled(replies(0, window(5, 100, SECOND)));
		assertThat(waiting.fill()).isDone();
		assertThat(this.reservoirs.take(second, 0, true, false)).isInstanceOf(PermitReservoirs.Answered.class);
	}

	@Test
	void anAbandonedFillGivesBackWhatItsCallHeldAndLetsTheWaitingTryAgain() {
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		KeyedLimit global = new KeyedLimit("capacity", "global", Limit.fixedWindow("200/1s"));
		PermitReservoirs.Call tierOnly = this.reservoirs.call(List.of(tier), 1);
		((PermitReservoirs.Fill) this.reservoirs.take(tierOnly, 0, true, false)).filled(replies(0, granted(3, 10)));
		PermitReservoirs.Call call = this.reservoirs.call(List.of(tier, global), 1);
		PermitReservoirs.Fill fill = (PermitReservoirs.Fill) this.reservoirs.take(call, 0, true, false);
		PermitReservoirs.AwaitFill waiting = (PermitReservoirs.AwaitFill) this.reservoirs
			.take(this.reservoirs.call(List.of(global), 1), 0, true, false);
		assertThat(call.reservoirs()[0].permits()).isOne();
		fill.abandon();
		assertThat(call.reservoirs()[0].permits()).isEqualTo(2);
		assertThat(waiting.fill()).isDone();
		// once ended, a late abandon changes nothing
		fill.abandon();
		assertThat(call.reservoirs()[0].permits()).isEqualTo(2);
	}

	@Test
	void onlyBucketsAndWindowsWithoutWaitOrPenaltyAreServedFromReservoirs() {
		assertThat(this.reservoirs.isEligible(List.of(TARGET), 1)).isTrue();
		assertThat(this.reservoirs.isEligible(List.of(TARGET), 6)).as("more than a fill takes").isFalse();
		assertThat(this.reservoirs.isEligible(List.of(TARGET), 0)).isFalse();
		assertThat(this.reservoirs
			.isEligible(List.of(keyed(Limit.fixedWindow("5/1s")), keyed(Limit.slidingWindowCounter("5/1s")),
					keyed(Limit.slidingWindowLog("5/1s")), keyed(Limit.leakyBucket("5/1s"))), 1))
			.isTrue();
		assertThat(this.reservoirs.isEligible(List.of(TARGET, keyed(Limit.concurrency(5))), 1)).isFalse();
		assertThat(this.reservoirs.isEligible(List.of(keyed(Limit.builder(dev.ratelimit.core.Algorithm.LEAKY_BUCKET)
			.rate("5/1s")
			.mode(dev.ratelimit.core.LeakMode.SHAPE)
			.build())), 1)).isFalse();
		assertThat(this.reservoirs.isEligible(List.of(keyed(Limit.builder(dev.ratelimit.core.Algorithm.FIXED_WINDOW)
			.rate("5/1s")
			.penalty(java.time.Duration.ofSeconds(1))
			.build())), 1)).isFalse();
	}

	private static KeyedLimit keyed(Limit limit) {
		return new KeyedLimit("p", "c", limit);
	}

	@Test
	void aReservoirLeftLowIsFilledAheadWhileItsLastPermitsStillServe() {
		// 16 permits a fill: filled ahead below 2
		PermitReservoirs reservoirs = new PermitReservoirs(16);
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		PermitReservoirs.Call call = reservoirs.call(List.of(tier), 1);
		contendedFill(reservoirs, call).filled(replies(0, granted(16, 500)));
		for (int i = 0; i < 13; i++) {
			assertThat(((PermitReservoirs.Answered) reservoirs.take(call, 10, false, true)).ahead()).isNull();
		}
		assertThat(call.reservoirs()[0].permits()).isEqualTo(2);
		PermitReservoirs.Answered low = (PermitReservoirs.Answered) reservoirs.take(call, 10, false, true);
		assertThat(low.statuses()).extracting(LimitStatus::allowed).containsExactly(true);
		PermitReservoirs.Fill ahead = low.ahead();
		assertThat(ahead).isNotNull();
		// it needs nothing and takes up to a full reservoir
		assertThat(ahead.needs()).containsExactly(0);
		assertThat(ahead.wants()).containsExactly(15);
		// while it is on its way, the last permit serves a call, and starts no other fill
		PermitReservoirs.Answered last = (PermitReservoirs.Answered) reservoirs.take(call, 10, false, true);
		assertThat(last.statuses()).extracting(LimitStatus::allowed).containsExactly(true);
		assertThat(last.ahead()).isNull();
		PermitReservoirs.AwaitFill waiting = (PermitReservoirs.AwaitFill) reservoirs.take(call, 10, false, true);
		// Redis grants it all: no call used any of it
		ahead.filled(replies(0, granted(15, 485)));
		assertThat(waiting.fill()).isDone();
		assertThat(call.reservoirs()[0].permits()).isEqualTo(15);
		assertThat(reservoirs.take(call, 10, false, true)).isInstanceOf(PermitReservoirs.Answered.class);
		assertThat(call.reservoirs()[0].permits()).isEqualTo(14);
	}

	@Test
	void aFillAheadThatFailsOrIsRefusedTakesNothingFromTheCallsItServed() {
		PermitReservoirs reservoirs = new PermitReservoirs(8);
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		PermitReservoirs.Call call = reservoirs.call(List.of(tier), 1);
		contendedFill(reservoirs, call).filled(replies(0, granted(8, 500)));
		PermitReservoirs.Fill ahead = serveUntilFilledAhead(reservoirs, call, 10);
		assertThat(call.reservoirs()[0].permits()).isZero();
		PermitReservoirs.AwaitFill waiting = (PermitReservoirs.AwaitFill) reservoirs.take(call, 10, false, true);
		// no answer: nothing comes back, nothing is taken, the waiting call tries again
		ahead.abandon();
		assertThat(waiting.fill()).isDone();
		assertThat(call.reservoirs()[0].permits()).isZero();
		assertThat(reservoirs.take(call, 10, false, true)).isNull();
		// a refusal of a fill that needed nothing answers no call: a call still asks
		// Redis
		PermitReservoirs.Fill next = (PermitReservoirs.Fill) reservoirs.take(call, 20, true, true);
		next.filled(replies(0, granted(8, 500)));
		ahead = serveUntilFilledAhead(reservoirs, call, 30);
		ahead.filled(replies(0, refused(100_000)));
		assertThat(call.reservoirs()[0].permits()).isZero();
		assertThat(reservoirs.take(call, 30, true, true)).isInstanceOf(PermitReservoirs.Fill.class);
	}

	@Test
	void aLimitNearlySpentInRedisIsNotFilledAhead() {
		PermitReservoirs reservoirs = new PermitReservoirs(8);
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		PermitReservoirs.Call call = reservoirs.call(List.of(tier), 1);
		// Redis had 3 of the 8 asked for
		contendedFill(reservoirs, call).filled(replies(0, granted(3, 2)));
		for (int i = 0; i < 2; i++) {
			assertThat(((PermitReservoirs.Answered) reservoirs.take(call, 10, false, true)).ahead()).isNull();
		}
		assertThat(call.reservoirs()[0].permits()).isZero();
		// the next call fills as before, and a full grant fills ahead again
		PermitReservoirs.Fill fill = (PermitReservoirs.Fill) reservoirs.take(call, 20, true, true);
		fill.filled(replies(0, granted(8, 100)));
		assertThat(serveUntilFilledAhead(reservoirs, call, 30).wants()).containsExactly(8);
	}

	@Test
	void aFillNeverAsksForMoreThanTheLimitsCapacityNorFillsAheadWhenRedisIsNotUp() {
		PermitReservoirs reservoirs = new PermitReservoirs(8);
		// capacity 4: a fill asks for 4 at most, and Redis granting them is a full grant
		KeyedLimit small = new KeyedLimit("api", "client", Limit.fixedWindow("4/1m"));
		PermitReservoirs.Call call = reservoirs.call(List.of(small), 1);
		PermitReservoirs.Fill fill = contendedFill(reservoirs, call);
		assertThat(fill.wants()).containsExactly(4);
		fill.filled(replies(0, window(4, 0, 60 * SECOND)));
		assertThat(call.reservoirs()[0].permits()).isEqualTo(3);
		for (int i = 0; i < 3; i++) {
			// Redis late or down: the failure policy says so, and nothing is sent ahead
			assertThat(((PermitReservoirs.Answered) reservoirs.take(call, 10, false, false)).ahead()).isNull();
		}
		assertThat(reservoirs.take(call, 10, false, false)).isNull();
	}

	@Test
	void aReservoirWhoseCallsNeverWaitIsNotFilledAhead() {
		PermitReservoirs reservoirs = new PermitReservoirs(8);
		KeyedLimit tier = new KeyedLimit("api", "client", Limit.tokenBucket("1000/1m"));
		PermitReservoirs.Call call = reservoirs.call(List.of(tier), 1);
		for (int round = 0; round < 3; round++) {
			// one caller at a time: it would wait for a fill ahead all the same
			((PermitReservoirs.Fill) reservoirs.take(call, 0, true, true)).filled(replies(0, granted(8, 500)));
			for (int i = 0; i < 7; i++) {
				assertThat(((PermitReservoirs.Answered) reservoirs.take(call, 10, false, true)).ahead()).isNull();
			}
		}
		// once a call finds a fill on its way, the next fills go ahead
		contendedFill(reservoirs, call).filled(replies(0, granted(8, 500)));
		assertThat(serveUntilFilledAhead(reservoirs, call, 10).wants()).containsExactly(8);
	}

	/**
	 * Claims a fill for a call while another call finds it on its way, as callers of a
	 * busy key do.
	 */
	private static PermitReservoirs.Fill contendedFill(PermitReservoirs reservoirs, PermitReservoirs.Call call) {
		PermitReservoirs.Fill fill = (PermitReservoirs.Fill) reservoirs.take(call, 0, true, true);
		assertThat(reservoirs.take(call, 0, false, true)).isInstanceOf(PermitReservoirs.AwaitFill.class);
		return fill;
	}

	/**
	 * Serves calls from a reservoir until one of them brings a fill ahead, within the
	 * reservoir's permits.
	 */
	private static PermitReservoirs.Fill serveUntilFilledAhead(PermitReservoirs reservoirs, PermitReservoirs.Call call,
			long now) {
		for (int i = 0; i < reservoirs.size(); i++) {
			PermitReservoirs.Fill ahead = ((PermitReservoirs.Answered) reservoirs.take(call, now, false, true)).ahead();
			if (ahead != null) {
				return ahead;
			}
		}
		throw new AssertionError("no call brought a fill ahead");
	}

	/** Serves calls here until the reservoir runs dry; returns how many it served. */
	private static int servedAt(PermitReservoirs reservoirs, PermitReservoirs.Call call, long now) {
		int served = 0;
		while (reservoirs.take(call, now, false, false) instanceof PermitReservoirs.Answered answered
				&& answered.statuses().get(0).allowed()) {
			served++;
		}
		return served;
	}

	/** Claims a fill of a reservoir for a call, and applies Redis's answer to it. */
	private static LimitStatus fill(PermitReservoirs.Reservoir reservoir, KeyedLimit target, long cost,
			ScriptReply.KeyOutcome outcome, long now) {
		PermitReservoirs.Claimed claim = (PermitReservoirs.Claimed) reservoir.step(target, cost, now, true);
		return reservoir.filled(target, claim, (outcome.mark() > 0) ? cost : 0, outcome, now, now).status();
	}

	/** Redis's answers to the keys of a fill, run at {@code redisNow}. */
	private static PermitReservoirs.FillReply[] replies(long redisNow, ScriptReply.KeyOutcome... outcomes) {
		PermitReservoirs.FillReply[] replies = new PermitReservoirs.FillReply[outcomes.length];
		for (int k = 0; k < outcomes.length; k++) {
			replies[k] = new PermitReservoirs.FillReply(outcomes[k], redisNow);
		}
		return replies;
	}

	private static ScriptReply.KeyOutcome granted(long permits, long redisRemaining) {
		return new ScriptReply.KeyOutcome(true, redisRemaining, 0, 0, 0, false, permits);
	}

	/** A window's grant, counted in a window that resets after {@code resetAfter}. */
	private static ScriptReply.KeyOutcome window(long permits, long redisRemaining, long resetAfter) {
		return new ScriptReply.KeyOutcome(true, redisRemaining, 0, resetAfter, 0, false, permits);
	}

	/** Redis refuses with one permit left. */
	private static ScriptReply.KeyOutcome refused(long retryAfterMicros) {
		return new ScriptReply.KeyOutcome(false, 1, retryAfterMicros, retryAfterMicros, 0, false, 0);
	}

}
