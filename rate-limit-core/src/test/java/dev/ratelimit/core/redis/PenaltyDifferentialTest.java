package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Penalties alike in memory and in Redis: every call runs on both, on one manual clock,
 * and every status must be equal.
 */
class PenaltyDifferentialTest {

	private static final Duration PENALTY = Duration.ofMinutes(15);

	private static LettuceConnectionFactory connectionFactory;

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter memory = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final RedisRateLimiter redis = RedisRateLimiter.builder(connectionFactory)
		.keyPrefix(TestRedis.uniquePrefix())
		.timeout(Duration.ofSeconds(5))
		.timeSource(this.clock)
		.build();

	private final KeyedLimit login = new KeyedLimit("login-failures", "alice",
			Limit.builder(Algorithm.FIXED_WINDOW).rate("5/1m").penalty(PENALTY).build());

	private final KeyedLimit burst = new KeyedLimit("login-failures", "alice", "burst",
			Limit.builder(Algorithm.TOKEN_BUCKET).rate("100/1s").penalty(PENALTY).build());

	private final KeyedLimit api = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1s"));

	private final KeyedLimit other = new KeyedLimit("other", "alice",
			Limit.builder(Algorithm.TOKEN_BUCKET).rate("100/1s").penalty(PENALTY).build());

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.standalone().lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@AfterEach
	void close() {
		this.redis.close();
	}

	@Test
	void aRejectedKeyIsRefusedForThePenaltyWithThePenaltysTimeLeftAsRetryAfter() {
		for (int i = 0; i < 5; i++) {
			assertThat(acquire(List.of(this.login), 1).isAllowed()).isTrue();
		}
		Decision rejected = acquire(List.of(this.login), 1);
		assertThat(rejected.isPenalized()).isFalse();
		// the call that starts the penalty waits for it too
		assertThat(rejected.retryAfter()).isEqualTo(Duration.ofMinutes(15));
		this.clock.advance(Duration.ofMinutes(4));
		Decision penalized = acquire(List.of(this.login), 1);
		assertThat(penalized.isPenalized()).isTrue();
		assertThat(penalized.retryAfter()).isEqualTo(Duration.ofMinutes(11));
		assertThat(inspect(this.login).penalized()).isTrue();
		this.clock.advance(Duration.ofMinutes(11));
		assertThat(inspect(this.login).penalized()).isFalse();
		assertThat(acquire(List.of(this.login), 1).remaining()).isEqualTo(4);
	}

	@Test
	void aPenalizedCallConsumesNothingAndPenalizesOnlyThePolicyThatRejected() {
		for (int i = 0; i < 5; i++) {
			acquire(List.of(this.other, this.api, this.login), 1);
		}
		Decision rejected = acquire(List.of(this.other, this.api, this.login), 1);
		assertThat(rejected.isAllowed()).isFalse();
		for (int i = 0; i < 12; i++) {
			this.clock.advance(Duration.ofSeconds(1));
			Decision penalized = acquire(List.of(this.other, this.api, this.burst, this.login), 1);
			assertThat(penalized.isPenalized()).isTrue();
		}
		assertThat(inspect(this.api).remaining()).isEqualTo(10);
		assertThat(inspect(this.other).penalized()).isFalse();
		assertThat(acquire(List.of(this.other), 1).isAllowed()).isTrue();
	}

	@Test
	void resetOfAnyLimitOfThePolicyAndKeyLiftsThePenalty() {
		exhaust(this.login);
		assertThat(acquire(List.of(this.burst), 1).isPenalized()).isTrue();
		this.memory.reset(this.burst);
		this.redis.reset(this.burst);
		assertThat(acquire(List.of(this.burst), 1).isAllowed()).isTrue();
		assertThat(acquire(List.of(this.login), 1).isPenalized()).isFalse();
	}

	@Test
	void resetAllLiftsEveryPenalty() {
		exhaust(this.login);
		this.memory.resetAll();
		this.redis.resetAll();
		assertThat(acquire(List.of(this.login), 1).isAllowed()).isTrue();
	}

	@Test
	void aRandomSequenceOfCallsIsDecidedAlike() {
		Random random = new Random(21);
		List<List<KeyedLimit>> calls = List.of(List.of(this.login), List.of(this.burst), List.of(this.api, this.login),
				List.of(this.other, this.burst), List.of(this.other), List.of(this.api, this.other, this.login));
		int penalized = 0;
		for (int step = 0; step < 400; step++) {
			this.clock.advanceMicros(random.nextLong(30_000_000));
			long cost = (random.nextInt(8) == 0) ? random.nextLong(120) : 1;
			if (acquire(calls.get(random.nextInt(calls.size())), cost).isPenalized()) {
				penalized++;
			}
			if (random.nextInt(50) == 0) {
				this.memory.reset(this.login);
				this.redis.reset(this.login);
			}
			inspect(this.login);
			inspect(this.other);
		}
		assertThat(penalized).as("penalized calls").isPositive();
	}

	private void exhaust(KeyedLimit target) {
		while (acquire(List.of(target), 1).isAllowed()) {
			// spend
		}
	}

	private Decision acquire(List<KeyedLimit> limits, long cost) {
		Decision expected = this.memory.acquire(limits, cost);
		Decision actual = this.redis.acquire(limits, cost);
		assertThat(actual.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(actual.statuses()).as("%s cost %d", limits, cost).isEqualTo(expected.statuses());
		return actual;
	}

	private LimitStatus inspect(KeyedLimit target) {
		LimitStatus expected = this.memory.inspect(List.of(target)).get(0);
		LimitStatus actual = this.redis.inspect(List.of(target)).get(0);
		assertThat(actual).as("inspect %s", target.limit()).isEqualTo(expected);
		return actual;
	}

}
