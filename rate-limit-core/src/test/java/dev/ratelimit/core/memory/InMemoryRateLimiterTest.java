package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitExceededException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryRateLimiterTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final KeyedLimit perClient = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1s"));

	private final KeyedLimit global = new KeyedLimit("backend", "global", Limit.slidingWindowCounter("3/1s"));

	@Test
	void allowsACallOnlyWhenEveryLimitAllowsIt() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.limiter.acquire(List.of(this.perClient, this.global), 1).isAllowed()).isTrue();
		}
		Decision rejected = this.limiter.acquire(List.of(this.perClient, this.global), 1);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.rejectedBy()).extracting((status) -> status.target().policy()).containsExactly("backend");
		assertThat(rejected.decidingStatus().target()).isEqualTo(this.global);
	}

	@Test
	void aRejectedCallConsumesNothingFromAnyLimit() {
		for (int i = 0; i < 3; i++) {
			this.limiter.acquire(List.of(this.perClient, this.global), 1);
		}
		long before = remaining(this.perClient);
		for (int i = 0; i < 5; i++) {
			assertThat(this.limiter.acquire(List.of(this.perClient, this.global), 1).isAllowed()).isFalse();
		}
		assertThat(remaining(this.perClient)).isEqualTo(before).isEqualTo(7);
	}

	@Test
	void summarisesTheLimitClosestToRejection() {
		Decision decision = this.limiter.acquire(List.of(this.perClient, this.global), 2);
		assertThat(decision.isAllowed()).isTrue();
		assertThat(decision.remaining()).isEqualTo(1);
		assertThat(decision.limit()).isEqualTo(3);
		assertThat(decision.statuses()).extracting(LimitStatus::remaining).containsExactly(8L, 1L);
	}

	@Test
	void retryAfterOfSeveralRejectingLimitsIsTheLongestWait() {
		KeyedLimit slow = new KeyedLimit("slow", "alice", Limit.tokenBucket("1/10s"));
		KeyedLimit fast = new KeyedLimit("fast", "alice", Limit.tokenBucket("1/1s"));
		this.limiter.acquire(List.of(slow, fast), 1);
		Decision rejected = this.limiter.acquire(List.of(slow, fast), 1);
		assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(10));
		assertThat(rejected.decidingStatus().target()).isEqualTo(slow);
		assertThat(rejected.rejectedBy()).hasSize(2);
	}

	@Test
	void aCostAboveCapacityIsRejectedAsNeverPassing() {
		Decision decision = this.limiter.acquire(this.perClient, 11);
		assertThat(decision.isAllowed()).isFalse();
		assertThat(decision.exceedsCapacity()).isTrue();
		assertThat(decision.retryAfter()).isZero();
		assertThat(new RateLimitExceededException(decision)).hasMessageContaining("more than the limit can ever grant")
			.hasMessageContaining("api");
		assertThat(remaining(this.perClient)).isEqualTo(10);
	}

	@Test
	void rejectsANegativeCost() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.limiter.acquire(this.perClient, -1))
			.withMessage("cost must be at least 0 (was -1)");
	}

	@Test
	void keepsStateApartPerPolicyKeyNameAndAlgorithm() {
		this.limiter.acquire(this.perClient, 10);
		assertThat(remaining(this.perClient)).isZero();
		assertThat(remaining(new KeyedLimit("api", "bob", this.perClient.limit()))).isEqualTo(10);
		assertThat(remaining(new KeyedLimit("search", "alice", this.perClient.limit()))).isEqualTo(10);
		assertThat(remaining(new KeyedLimit("api", "alice", "token-bucket-2", this.perClient.limit()))).isEqualTo(10);
		// A changed limit of the same name and algorithm (say the caller moved to another
		// tier) keeps what was spent: 10 of 1000.
		KeyedLimit upgraded = new KeyedLimit("api", "alice", Limit.tokenBucket("1000/1m"));
		assertThat(this.limiter.acquire(upgraded).remaining()).isEqualTo(989);
		// A changed algorithm starts from fresh state.
		KeyedLimit window = new KeyedLimit("api", "alice", "token-bucket", Limit.fixedWindow("10/1s"));
		assertThat(this.limiter.acquire(window).remaining()).isEqualTo(9);
	}

	@Test
	void refusesTwoLimitsOfOneNameWithDifferentParametersInOneCall() {
		KeyedLimit other = new KeyedLimit("api", "alice", Limit.tokenBucket("20/1s"));
		assertThatIllegalArgumentException().isThrownBy(() -> this.limiter.acquire(List.of(this.perClient, other), 1))
			.withMessageContaining("'api'")
			.withMessageContaining("'token-bucket'")
			.withMessageContaining("give each limit its own name");
		assertThat(this.limiter.acquire(List.of(this.perClient, this.perClient), 1).isAllowed()).isTrue();
	}

	@Test
	void inspectConsumesNothingAndReportsTheWaitUntilFull() {
		this.limiter.acquire(this.perClient, 4);
		for (int i = 0; i < 3; i++) {
			LimitStatus status = this.limiter.inspect(List.of(this.perClient)).get(0);
			assertThat(status.allowed()).isTrue();
			assertThat(status.remaining()).isEqualTo(6);
			assertThat(status.resetAfter()).isEqualTo(Duration.ofMillis(400));
		}
		assertThat(this.limiter.keyCount()).isEqualTo(1);
		this.limiter.inspect(List.of(new KeyedLimit("api", "never-seen", this.perClient.limit())));
		assertThat(this.limiter.keyCount()).isEqualTo(1);
	}

	@Test
	void resetForgetsAKey() {
		this.limiter.acquire(this.perClient, 10);
		this.limiter.reset(this.perClient);
		assertThat(remaining(this.perClient)).isEqualTo(10);
	}

	@Test
	void releaseGivesBackConcurrencyPermitsOnce() {
		KeyedLimit inFlight = new KeyedLimit("uploads", "alice", Limit.concurrency(2));
		Decision first = this.limiter.acquire(inFlight);
		Decision second = this.limiter.acquire(inFlight);
		assertThat(first.leases()).hasSize(1);
		assertThat(this.limiter.acquire(inFlight).isAllowed()).isFalse();
		this.limiter.release(first);
		this.limiter.release(first);
		assertThat(remaining(inFlight)).isEqualTo(1);
		assertThat(this.limiter.acquire(inFlight).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(inFlight).isAllowed()).isFalse();
		this.limiter.release(second);
		assertThat(remaining(inFlight)).isEqualTo(1);
	}

	@Test
	void aRejectedCallHoldsNoLease() {
		KeyedLimit inFlight = new KeyedLimit("uploads", "alice", Limit.concurrency(1));
		Decision rejected = this.limiter.acquire(List.of(inFlight, this.global), 4);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.leases()).isEmpty();
		assertThat(remaining(inFlight)).isEqualTo(1);
	}

	@Test
	void dropsAKeyOnceItsStateIsIndistinguishableFromAFreshOne() {
		this.limiter.acquire(this.perClient, 10);
		this.clock.advance(Duration.ofMillis(999));
		this.limiter.cleanUp();
		assertThat(this.limiter.keyCount()).isEqualTo(1);
		// Caffeine expires entries in timer-wheel buckets of about a second, so removal
		// may lag the retention a little.
		this.clock.advance(Duration.ofMillis(1001 + 1100));
		this.limiter.cleanUp();
		assertThat(this.limiter.keyCount()).isZero();
		assertThat(remaining(this.perClient)).isEqualTo(10);
	}

	@Test
	void decidesACallWithoutLimitsAsUnlimited() {
		assertThat(this.limiter.acquire(List.of(), 5).isAllowed()).isTrue();
	}

	private long remaining(KeyedLimit limit) {
		return this.limiter.inspect(List.of(limit)).get(0).remaining();
	}

}
