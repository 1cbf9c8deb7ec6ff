package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link InMemoryRateLimiter#resetAll()}: one call that gives every limit back its fresh
 * state, as a test needs between two cases.
 */
class ResetAllTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final List<KeyedLimit> limits = List.of(new KeyedLimit("api", "alice", Limit.tokenBucket("2/1h")),
			new KeyedLimit("api", "bob", Limit.fixedWindow("2/1h")),
			new KeyedLimit("search", "alice", Limit.slidingWindowLog("2/1h")),
			new KeyedLimit("search", "bob", Limit.slidingWindowCounter("2/1h")),
			new KeyedLimit("upload", "alice", Limit.leakyBucket("2/1h")),
			new KeyedLimit("streams", "alice", Limit.concurrency(2)));

	@Test
	void everyLimitOfEveryAlgorithmIsFullAgainAndNoKeyIsHeld() {
		for (KeyedLimit limit : this.limits) {
			exhaust(limit);
		}
		assertThat(this.limiter.keyCount()).isEqualTo(this.limits.size());
		this.limiter.resetAll();
		assertThat(this.limiter.keyCount()).isZero();
		for (KeyedLimit limit : this.limits) {
			assertThat(this.limiter.inspect(List.of(limit))).extracting(LimitStatus::remaining).containsExactly(2L);
			assertThat(this.limiter.acquire(limit).isAllowed()).as(limit.policy() + " " + limit.key()).isTrue();
		}
	}

	@Test
	void theLimitOfTheLastCallIsFreshToo() {
		// the limiter finds the slot of the very KeyedLimit it saw last without a look-up
		KeyedLimit limit = new KeyedLimit("api", "carol", Limit.tokenBucket("1/1h"));
		assertThat(this.limiter.acquire(limit).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(limit).isAllowed()).isFalse();
		this.limiter.resetAll();
		assertThat(this.limiter.acquire(limit).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(limit).isAllowed()).isFalse();
	}

	@Test
	void aLeaseTakenBeforeTheResetTakesNothingFromTheFreshState() {
		KeyedLimit streams = new KeyedLimit("streams", "alice", Limit.concurrency(1));
		Decision held = this.limiter.acquire(streams);
		this.limiter.resetAll();
		Decision fresh = this.limiter.acquire(streams);
		assertThat(fresh.isAllowed()).isTrue();
		this.limiter.release(held);
		assertThat(this.limiter.acquire(streams).isAllowed()).isFalse();
		this.limiter.release(fresh);
		assertThat(this.limiter.acquire(streams).isAllowed()).isTrue();
	}

	@Test
	void aResetLimiterRunsOnAsBefore() {
		KeyedLimit limit = new KeyedLimit("api", "dave", Limit.tokenBucket("1/1s"));
		this.limiter.acquire(limit);
		this.limiter.resetAll();
		assertThat(this.limiter.acquire(limit).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(limit).isAllowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.limiter.acquire(limit).isAllowed()).isTrue();
	}

	@Test
	void aLimiterThatDoesNotImplementItSaysSo() {
		RateLimiter custom = new RateLimiter() {

			@Override
			public Decision acquire(List<KeyedLimit> limits, long cost) {
				return Decision.unlimited();
			}

			@Override
			public List<LimitStatus> inspect(List<KeyedLimit> limits) {
				return List.of();
			}

			@Override
			public void release(Decision decision) {
			}

			@Override
			public void reset(KeyedLimit limit) {
			}

		};
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(custom::resetAll)
			.withMessageContaining("resetAll");
	}

	private void exhaust(KeyedLimit limit) {
		while (this.limiter.acquire(limit).isAllowed()) {
			// concurrency permits stay held: no release
		}
	}

}
