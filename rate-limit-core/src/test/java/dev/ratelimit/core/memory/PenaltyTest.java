package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limit with a penalty: once it rejects a client key, its policy refuses that key for
 * the penalty, whatever the limits say, and consumes nothing meanwhile.
 */
class PenaltyTest {

	private static final Duration PENALTY = Duration.ofMinutes(15);

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	/** The login-failures policy of the spec: 5 per 15 minutes, 15 minutes of penalty. */
	private final KeyedLimit login = new KeyedLimit("login-failures", "alice",
			Limit.builder(dev.ratelimit.core.Algorithm.FIXED_WINDOW).rate("5/1m").penalty(PENALTY).build());

	private final KeyedLimit burst = new KeyedLimit("login-failures", "alice", "burst",
			Limit.builder(dev.ratelimit.core.Algorithm.TOKEN_BUCKET).rate("100/1s").penalty(PENALTY).build());

	private final KeyedLimit api = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1s"));

	@Test
	void aRejectedKeyIsRefusedForThePenaltyEvenOnceItsLimitWouldAllowIt() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.limiter.acquire(this.login).isAllowed()).isTrue();
		}
		Decision rejected = this.limiter.acquire(this.login);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.isPenalized()).isFalse();
		this.clock.advance(Duration.ofMinutes(2));
		Decision penalized = this.limiter.acquire(this.login);
		assertThat(penalized.isAllowed()).isFalse();
		assertThat(penalized.isPenalized()).isTrue();
		assertThat(penalized.retryAfter()).isEqualTo(Duration.ofMinutes(13));
		assertThat(penalized.resetAfter()).isEqualTo(Duration.ofMinutes(13));
		assertThat(penalized.remaining()).isZero();
		assertThat(this.limiter.tryAcquire(this.login, 1)).isFalse();
		this.clock.advance(Duration.ofMinutes(13));
		Decision after = this.limiter.acquire(this.login);
		assertThat(after.isAllowed()).isTrue();
		assertThat(after.isPenalized()).isFalse();
		assertThat(after.remaining()).isEqualTo(4);
	}

	@Test
	void aPenaltyDoesNotGrowWhileTheKeyKeepsCalling() {
		exhaust(this.login);
		for (int minute = 1; minute < 15; minute++) {
			this.clock.advance(Duration.ofMinutes(1));
			assertThat(this.limiter.acquire(this.login).retryAfter()).isEqualTo(Duration.ofMinutes(15 - minute));
		}
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.limiter.acquire(this.login).isAllowed()).isTrue();
	}

	@Test
	void aPenalizedCallConsumesNothingFromTheCallsOtherLimits() {
		exhaust(this.login);
		for (int i = 0; i < 20; i++) {
			Decision penalized = this.limiter.acquire(List.of(this.api, this.login), 1);
			assertThat(penalized.isAllowed()).isFalse();
			assertThat(penalized.isPenalized()).isTrue();
			assertThat(penalized.rejectedBy()).extracting((status) -> status.target().policy())
				.containsExactly("login-failures");
		}
		assertThat(this.limiter.inspect(List.of(this.api)).get(0).remaining()).isEqualTo(10);
	}

	@Test
	void everyLimitOfThePenalizedPolicyAndKeyIsRefused() {
		exhaust(this.login);
		Decision penalized = this.limiter.acquire(this.burst);
		assertThat(penalized.isPenalized()).isTrue();
		assertThat(penalized.retryAfter()).isEqualTo(PENALTY);
		assertThat(this.limiter.inspect(List.of(this.burst)).get(0).penalized()).isTrue();
	}

	@Test
	void onlyThePolicyThatRejectedIsPenalized() {
		KeyedLimit other = new KeyedLimit("other", "alice",
				Limit.builder(dev.ratelimit.core.Algorithm.TOKEN_BUCKET).rate("100/1s").penalty(PENALTY).build());
		for (int i = 0; i < 5; i++) {
			assertThat(this.limiter.acquire(List.of(other, this.login), 1).isAllowed()).isTrue();
		}
		Decision rejected = this.limiter.acquire(List.of(other, this.login), 1);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.isPenalized()).isFalse();
		// the call consumed nothing from other, which allowed it: other is not penalized
		Decision alone = this.limiter.acquire(other);
		assertThat(alone.isAllowed()).isTrue();
		assertThat(alone.remaining()).isEqualTo(94);
		// and another client key of the penalized policy is not either
		KeyedLimit bob = new KeyedLimit("login-failures", "bob", this.login.limit());
		assertThat(this.limiter.acquire(bob).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(this.login).isPenalized()).isTrue();
	}

	@Test
	void aLimitWithoutPenaltyNeverPenalizes() {
		KeyedLimit plain = new KeyedLimit("plain", "alice", Limit.fixedWindow("1/1s"));
		this.limiter.acquire(plain);
		assertThat(this.limiter.acquire(plain).isAllowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.limiter.acquire(plain).isAllowed()).isTrue();
	}

	@Test
	void inspectShowsAPenaltyWithoutChangingIt() {
		exhaust(this.login);
		this.clock.advance(Duration.ofMinutes(5));
		LimitStatus status = this.limiter.inspect(List.of(this.login)).get(0);
		assertThat(status).isEqualTo(new LimitStatus(this.login, false, 0, Duration.ofMinutes(10).toNanos() / 1000,
				Duration.ofMinutes(10).toNanos() / 1000, 0, false, true));
		this.clock.advance(Duration.ofMinutes(10));
		LimitStatus after = this.limiter.inspect(List.of(this.login)).get(0);
		assertThat(after.penalized()).isFalse();
		assertThat(after.remaining()).isEqualTo(5);
	}

	@Test
	void resetOfAnyLimitOfThePolicyAndKeyLiftsThePenalty() {
		exhaust(this.login);
		assertThat(this.limiter.acquire(this.burst).isPenalized()).isTrue();
		this.limiter.reset(this.burst);
		assertThat(this.limiter.acquire(this.burst).isAllowed()).isTrue();
		// the reset limit's state is fresh; the other limit keeps its own
		assertThat(this.limiter.acquire(this.login).isAllowed()).isFalse();
	}

	@Test
	void resetAllLiftsEveryPenalty() {
		exhaust(this.login);
		this.limiter.resetAll();
		assertThat(this.limiter.acquire(this.login).isAllowed()).isTrue();
	}

	@Test
	void aChangedPenaltyKeepsWhatWasSpent() {
		for (int i = 0; i < 3; i++) {
			this.limiter.acquire(this.login);
		}
		KeyedLimit longer = new KeyedLimit("login-failures", "alice",
				Limit.builder(dev.ratelimit.core.Algorithm.FIXED_WINDOW)
					.rate("5/1m")
					.penalty(Duration.ofHours(1))
					.build());
		assertThat(this.limiter.acquire(longer).remaining()).isEqualTo(1);
	}

	@Test
	void aLongClientKeyIsPenalizedByItsDigest() {
		KeyedLimit long1 = new KeyedLimit("login-failures", "k".repeat(100), this.login.limit());
		KeyedLimit long2 = new KeyedLimit("login-failures", "k".repeat(99) + "j", this.login.limit());
		exhaust(long1);
		assertThat(this.limiter.acquire(long1).isPenalized()).isTrue();
		assertThat(this.limiter.acquire(long2).isAllowed()).isTrue();
	}

	/** Spends the limit and has it reject once: the penalty starts now. */
	private void exhaust(KeyedLimit target) {
		while (this.limiter.acquire(target).isAllowed()) {
			// spend
		}
	}

}
