package dev.ratelimit.core.failure;

import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FailurePolicyRateLimiter#resetAll()} forgets every limit in the store and in
 * this instance's own limits.
 */
class FailurePolicyResetAllTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter store = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final InMemoryRateLimiter local = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	@Test
	void theStoreAndTheLocalLimitsAreBothFreshAgain() {
		try (FailurePolicyRateLimiter policy = FailurePolicyRateLimiter.builder(this.store)
			.localFallback(this.local)
			.timeSource(this.clock)
			.build()) {
			KeyedLimit limit = new KeyedLimit("api", "alice", Limit.fixedWindow("2/1h"));
			KeyedLimit streams = new KeyedLimit("streams", "alice", Limit.concurrency(1));
			assertThat(policy.acquire(limit).isAllowed()).isTrue();
			assertThat(policy.acquire(limit).isAllowed()).isTrue();
			Decision held = policy.acquire(streams);
			assertThat(held.isAllowed()).isTrue();
			// every call the store allows is charged to the local limits too
			assertThat(remaining(this.local, limit)).isZero();
			policy.resetAll();
			assertThat(remaining(this.store, limit)).isEqualTo(2);
			assertThat(remaining(this.local, limit)).isEqualTo(2);
			assertThat(this.store.keyCount()).isZero();
			assertThat(this.local.keyCount()).isZero();
			assertThat(policy.acquire(limit).isAllowed()).isTrue();
			assertThat(policy.acquire(streams).isAllowed()).isTrue();
		}
	}

	private static long remaining(InMemoryRateLimiter limiter, KeyedLimit limit) {
		return limiter.inspect(List.of(limit)).stream().mapToLong(LimitStatus::remaining).sum();
	}

}
