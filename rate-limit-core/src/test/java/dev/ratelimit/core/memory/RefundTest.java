package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link RateLimiter#refund}: permits an allowed call took come back while they still
 * count, and never beyond what the limit holds. The Redis script's refunds are held to
 * these in {@code RedisDifferentialTest}.
 */
class RefundTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "token-bucket", "leaky-bucket", "fixed-window", "sliding-window-counter",
			"sliding-window-log" })
	void aRefundedCallLeavesRoomForOneMore(String algorithm) {
		KeyedLimit login = new KeyedLimit("login", "alice", limit(algorithm, "3/1m"));
		Decision first = this.limiter.acquire(login);
		this.limiter.acquire(login);
		this.limiter.acquire(login);
		assertThat(this.limiter.acquire(login).isAllowed()).isFalse();
		this.limiter.refund(first, List.of(login), 1);
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(1);
		assertThat(this.limiter.acquire(login).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(login).isAllowed()).isFalse();
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "token-bucket", "leaky-bucket" })
	void aBucketNeverHoldsMoreThanItsCapacityAfterARefund(String algorithm) {
		KeyedLimit login = new KeyedLimit("login", "alice", limit(algorithm, "3/1m"));
		Decision first = this.limiter.acquire(login, 2);
		this.clock.advance(Duration.ofSeconds(30));
		// refilled by 1.5 permits since: 2.5 left, and the refund of 2 fills it
		this.limiter.refund(first, List.of(login), 2);
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(3);
		assertThat(this.limiter.acquire(login, 3).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(login).isAllowed()).isFalse();
	}

	@Test
	void aFixedWindowKeepsTheCountOfAWindowThatHasEnded() {
		KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("2/1m"));
		Decision inFirst = this.limiter.acquire(login);
		this.clock.advance(Duration.ofMinutes(1));
		this.limiter.acquire(login);
		this.limiter.acquire(login);
		this.limiter.refund(inFirst, List.of(login), 1);
		assertThat(this.limiter.acquire(login).isAllowed()).as("the second window is spent").isFalse();
	}

	@Test
	void aSlidingWindowCounterGivesBackFromThePreviousWindowWhileItWeighs() {
		KeyedLimit login = new KeyedLimit("login", "alice", Limit.slidingWindowCounter("4/1m"));
		Decision[] earlier = new Decision[4];
		for (int i = 0; i < 4; i++) {
			earlier[i] = this.limiter.acquire(login);
		}
		this.clock.advance(Duration.ofSeconds(61));
		// nearly the whole previous window weighs: 4 × 59/60 rounds up to 4
		assertThat(this.limiter.acquire(login).isAllowed()).isFalse();
		this.limiter.refund(earlier[0], List.of(login), 1);
		this.limiter.refund(earlier[1], List.of(login), 1);
		// 2 × 59/60 of the previous window weighs now: 2 left... less what rounds up
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(2);
		this.clock.advance(Duration.ofMinutes(1));
		// two windows later the previous count is gone: a refund gives nothing
		this.limiter.refund(earlier[2], List.of(login), 1);
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(4);
		assertThat(this.limiter.acquire(login, 4).isAllowed()).isTrue();
		this.limiter.refund(earlier[3], List.of(login), 1);
		assertThat(this.limiter.acquire(login).isAllowed()).isFalse();
	}

	@Test
	void aLogGivesBackTheEntryOfTheCallAndNotAnother() {
		KeyedLimit login = new KeyedLimit("login", "alice", Limit.slidingWindowLog("3/1m"));
		Decision first = this.limiter.acquire(login);
		this.clock.advance(Duration.ofSeconds(20));
		Decision second = this.limiter.acquire(login);
		this.clock.advance(Duration.ofSeconds(20));
		this.limiter.acquire(login);
		this.limiter.refund(second, List.of(login), 1);
		// the first entry leaves the window at 60 s: then two are free
		this.clock.advance(Duration.ofSeconds(20));
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(2);
		// the first entry has left the window: its refund gives nothing more
		this.limiter.refund(first, List.of(login), 1);
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(2);
	}

	@Test
	void aRefundGivesBackToTheNamedLimitsOnly() {
		KeyedLimit counted = new KeyedLimit("login-by-ip", "192.0.2.1", Limit.fixedWindow("5/15m"));
		KeyedLimit other = new KeyedLimit("api", "192.0.2.1", Limit.tokenBucket("10/1m"));
		Decision decision = this.limiter.acquire(List.of(counted, other), 2);
		this.limiter.refund(decision, List.of(counted), 2);
		assertThat(this.limiter.inspect(List.of(counted, other))).extracting((status) -> status.remaining())
			.containsExactly(5L, 8L);
	}

	@Test
	void aRefundThatLeavesAStateAsAFreshOneLetsGoOfItsKey() {
		KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("5/15m"));
		KeyedLimit other = new KeyedLimit("login", "bob", Limit.fixedWindow("5/15m"));
		Decision decision = this.limiter.acquire(login);
		Decision twice = this.limiter.acquire(other, 2);
		assertThat(this.limiter.keyCount()).isEqualTo(2);
		this.limiter.refund(decision, List.of(login), 1);
		this.limiter.refund(twice, List.of(other), 1);
		// a successful login keeps nothing; bob still holds one permit's worth
		assertThat(this.limiter.keyCount()).isOne();
		assertThat(this.limiter.inspect(List.of(login, other))).extracting((status) -> status.remaining())
			.containsExactly(5L, 4L);
		assertThat(this.limiter.acquire(login, 5).isAllowed()).isTrue();
	}

	@Test
	void aRejectedDecisionOrOneTheFailurePolicyMadeGivesNothingBack() {
		KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("1/1m"));
		this.limiter.acquire(login);
		Decision rejected = this.limiter.acquire(login);
		this.limiter.refund(rejected, List.of(login), 1);
		this.limiter.refund(Decision.unavailable(true, 0), List.of(login), 1);
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isZero();
	}

	@Test
	void aLimitChangedSinceTheCallKeepsItsPermitsSpent() {
		KeyedLimit before = new KeyedLimit("login", "alice", Limit.tokenBucket("3/1m"));
		Decision decision = this.limiter.acquire(before, 3);
		KeyedLimit after = new KeyedLimit("login", "alice", Limit.tokenBucket("6/1m"));
		// spent stays spent: 6 - 3 left under the new capacity
		assertThat(this.limiter.acquire(after).isAllowed()).isTrue();
		this.limiter.refund(decision, List.of(before), 3);
		assertThat(this.limiter.inspect(List.of(after)).get(0).remaining()).isEqualTo(2);
	}

	@Test
	void threadsTakingAndGivingBackOneKeyNeverLoseNorMintAPermit() throws Exception {
		KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("50/1h"));
		AtomicLong held = new AtomicLong();
		AtomicLong over = new AtomicLong();
		ExecutorService threads = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				done.add(threads.submit(() -> {
					for (int i = 0; i < 20_000; i++) {
						Decision decision = this.limiter.acquire(login);
						if (!decision.isAllowed()) {
							continue;
						}
						if (held.incrementAndGet() > 50) {
							over.incrementAndGet();
						}
						// every other success gives its permit back, often to a key left
						// as a fresh one, which another thread is deciding on meanwhile
						if ((i & 1) == 0) {
							held.decrementAndGet();
							this.limiter.refund(decision, List.of(login), 1);
						}
					}
				}));
			}
			for (Future<?> each : done) {
				each.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(over).hasValue(0);
		assertThat(this.limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(50 - held.get());
	}

	@Test
	void aNegativeCostIsRefused() {
		KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("1/1m"));
		Decision decision = this.limiter.acquire(login);
		assertThatIllegalArgumentException().isThrownBy(() -> this.limiter.refund(decision, List.of(login), -1))
			.withMessageContaining("cost");
	}

	private static Limit limit(String algorithm, String rate) {
		Algorithm chosen = Algorithm.valueOf(algorithm.toUpperCase().replace('-', '_'));
		Limit.Builder builder = Limit.builder(chosen).rate(rate);
		return (chosen == Algorithm.LEAKY_BUCKET) ? builder.mode(LeakMode.POLICE).build() : builder.build();
	}

}
