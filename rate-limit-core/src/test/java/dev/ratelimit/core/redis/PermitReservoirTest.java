package dev.ratelimit.core.redis;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PermitReservoirs.Reservoir} without Redis: Redis's answers to fills are given as
 * outcomes; the reservoir serves calls from what a grant left until it is empty or its
 * window has passed, and answers locally while Redis's last refusal of as many permits
 * holds.
 */
class PermitReservoirTest {

	private static final long SECOND = 1_000_000;

	/** Ten per second: a window of one second. */
	private static final KeyedLimit TARGET = new KeyedLimit("api", "client", Limit.tokenBucket("10/1s"));

	private final PermitReservoirs.Reservoir reservoir = new PermitReservoirs(5).reservoir("rl:key");

	@Test
	void anEmptyReservoirServesNothingAndNeedsTheWholeCost() {
		assertThat(this.reservoir.tryTake(TARGET, 1, 0)).isNull();
		assertThat(this.reservoir.shortfall(3)).isEqualTo(3);
	}

	@Test
	void servesFromAGrantUntilEmpty() {
		// a fill of 5 for a call of 1: 4 left here
		LimitStatus filled = this.reservoir.filled(TARGET, 1, 1, granted(5, 2), 0);
		assertThat(filled.allowed()).isTrue();
		for (int i = 0; i < 4; i++) {
			assertThat(this.reservoir.tryTake(TARGET, 1, 10)).extracting(LimitStatus::allowed).isEqualTo(true);
		}
		assertThat(this.reservoir.tryTake(TARGET, 1, 10)).isNull();
		assertThat(this.reservoir.shortfall(1)).isEqualTo(1);
	}

	@Test
	void aCallCostingMoreThanIsLeftIsNotServedAndNeedsOnlyTheDifference() {
		this.reservoir.filled(TARGET, 1, 1, granted(5, 0), 0);
		assertThat(this.reservoir.tryTake(TARGET, 6, 10)).isNull();
		assertThat(this.reservoir.shortfall(6)).isEqualTo(2);
		assertThat(this.reservoir.tryTake(TARGET, 4, 10)).isNotNull();
	}

	@Test
	void permitsLapseOnceTheBucketsWindowHasPassed() {
		this.reservoir.filled(TARGET, 1, 1, granted(5, 0), 0);
		assertThat(this.reservoir.tryTake(TARGET, 1, SECOND - 1)).isNotNull();
		assertThat(this.reservoir.tryTake(TARGET, 1, SECOND)).isNull();
		assertThat(this.reservoir.shortfall(1)).isEqualTo(1);
	}

	@Test
	void reportsWhatIsLeftHereAndInRedisAsRemaining() {
		LimitStatus filled = this.reservoir.filled(TARGET, 1, 1,
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
		LimitStatus refused = this.reservoir.filled(TARGET, 2, 2, refused(300_000), 1_000);
		assertThat(refused.allowed()).isFalse();
		LimitStatus again = this.reservoir.refusal(TARGET, 2, 101_000);
		assertThat(again.allowed()).isFalse();
		assertThat(again.retryAfterMicros()).isEqualTo(200_000);
		assertThat(again.remaining()).isEqualTo(1);
		assertThat(this.reservoir.refusal(TARGET, 2, 300_999)).isNotNull();
		assertThat(this.reservoir.refusal(TARGET, 2, 301_000)).isNull();
	}

	@Test
	void asksRedisAgainForADifferentNeed() {
		this.reservoir.filled(TARGET, 2, 2, refused(300_000), 0);
		assertThat(this.reservoir.refusal(TARGET, 1, 10)).isNull();
		assertThat(this.reservoir.refusal(TARGET, 3, 10)).isNull();
		assertThat(this.reservoir.refusal(TARGET, 2, 10)).isNotNull();
	}

	@Test
	void aGrantEndsTheRememberedRefusal() {
		this.reservoir.filled(TARGET, 2, 2, refused(300_000), 0);
		this.reservoir.filled(TARGET, 2, 2, granted(2, 0), 10);
		assertThat(this.reservoir.refusal(TARGET, 2, 20)).isNull();
	}

	@Test
	void aRefusalKeepsThePermitsHeldHere() {
		this.reservoir.filled(TARGET, 1, 1, granted(2, 0), 0);
		// 1 held here; a call of 3 needs 2 more, which Redis refuses
		LimitStatus refused = this.reservoir.filled(TARGET, 2, 3, refused(100_000), 10);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.remaining()).isEqualTo(2);
		assertThat(this.reservoir.tryTake(TARGET, 1, 20)).isNotNull();
	}

	@Test
	void aChangedLimitDropsThePermitsAndTheRefusalHeldHere() {
		KeyedLimit raised = new KeyedLimit("api", "client", Limit.tokenBucket("100/1s"));
		this.reservoir.filled(TARGET, 1, 1, granted(5, 0), 0);
		// taken from Redis under the old limit: spent there, never served under the new
		// one
		assertThat(this.reservoir.tryTake(raised, 1, 10)).isNull();
		assertThat(this.reservoir.shortfall(1)).isEqualTo(1);
		this.reservoir.filled(raised, 1, 1, granted(5, 0), 20);
		assertThat(this.reservoir.tryTake(raised, 1, 30)).isNotNull();
		this.reservoir.filled(raised, 2, 2, refused(300_000), 40);
		assertThat(this.reservoir.tryTake(TARGET, 2, 50)).isNull();
		assertThat(this.reservoir.refusal(TARGET, 2, 50)).isNull();
	}

	private static ScriptReply.KeyOutcome granted(long permits, long redisRemaining) {
		return new ScriptReply.KeyOutcome(true, redisRemaining, 0, 0, 0, false, permits);
	}

	/** Redis refuses with one permit left. */
	private static ScriptReply.KeyOutcome refused(long retryAfterMicros) {
		return new ScriptReply.KeyOutcome(false, 1, retryAfterMicros, retryAfterMicros, 0, false, 0);
	}

}
