package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisRateLimiter#refund}: permits come back where the call took them: to the
 * keys of every slot it touched in a cluster, to the reservoirs in two-tier mode, and to
 * this instance's own limits for a call they decided while Redis was down. The script's
 * refund of each algorithm is held to the in-memory one in {@code RedisDifferentialTest}.
 */
class RedisRefundTest {

	@Test
	void aCallAcrossSlotsOfAClusterGetsItsPermitsBackOnEveryMaster() {
		try (RedisCluster cluster = RedisCluster.start()) {
			LettuceConnectionFactory factory = cluster.lettuce();
			RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
				.keyPrefix(TestRedis.uniquePrefix())
				.timeout(Duration.ofSeconds(2))
				.build();
			try {
				// client keys in different slots, so that the call is decided slot by
				// slot
				KeyedLimit byUser = new KeyedLimit("login-by-user", "alice", Limit.fixedWindow("3/15m"));
				KeyedLimit byAddress = new KeyedLimit("login-by-ip", "192.0.2.1", Limit.slidingWindowLog("3/15m"));
				KeyedLimit bucket = new KeyedLimit("api", "192.0.2.1", Limit.tokenBucket("3/15m"));
				List<KeyedLimit> limits = List.of(byUser, byAddress, bucket);
				Decision first = limiter.acquire(limits, 1);
				limiter.acquire(limits, 1);
				limiter.acquire(limits, 1);
				assertThat(limiter.acquire(limits, 1).isAllowed()).isFalse();
				limiter.refund(first, limits, 1);
				assertThat(limiter.inspect(limits)).extracting((status) -> status.remaining())
					.containsExactly(1L, 1L, 1L);
				assertThat(limiter.acquire(limits, 1).isAllowed()).isTrue();
				assertThat(limiter.acquire(limits, 1).isAllowed()).isFalse();
			}
			finally {
				limiter.close();
				factory.destroy();
			}
		}
	}

	@Test
	void aRefundThatLeavesAKeyAsAFreshOneDeletesItSoThatASuccessKeepsNothingInRedis() {
		LettuceConnectionFactory factory = TestRedis.standalone().lettuce();
		String prefix = TestRedis.uniquePrefix();
		RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(2))
			.build();
		RedisKeys keys = new RedisKeys(prefix);
		try (RespClient redis = TestRedis.standalone().client()) {
			for (Limit limit : List.of(Limit.fixedWindow("5/15m"), Limit.slidingWindowCounter("5/15m"),
					Limit.tokenBucket("5/15m"), Limit.leakyBucket("5/15m"))) {
				KeyedLimit login = new KeyedLimit("login", "alice", limit);
				Decision decision = limiter.acquire(login);
				assertThat(redis.number("EXISTS", keys.key(login))).as(limit.toString()).isOne();
				limiter.refund(decision, List.of(login), 1);
				assertThat(redis.number("EXISTS", keys.key(login))).as(limit.toString()).isZero();
				assertThat(limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(5);
			}
		}
		finally {
			limiter.close();
			factory.destroy();
		}
	}

	@Test
	void inTwoTierModePermitsGoBackToTheReservoirTheyCameFrom() {
		LettuceConnectionFactory factory = TestRedis.standalone().lettuce();
		RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.reservoir(4)
			.build();
		try {
			KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("100/15m"));
			Decision first = limiter.acquire(login);
			PermitReservoirs.Reservoir reservoir = limiter.reservoir(login);
			assertThat(reservoir.permits()).isEqualTo(3);
			limiter.refund(first, List.of(login), 1);
			assertThat(reservoir.permits()).isEqualTo(4);
			// Redis counted the fill of 4; the reservoir holds them for this instance
			assertThat(limiter.inspect(List.of(login)).get(0).remaining()).isEqualTo(96);
		}
		finally {
			limiter.close();
			factory.destroy();
		}
	}

	@Test
	void inTwoTierModeAPermitOfAWindowThatHasEndedIsNotGivenBackToTheNext() {
		LettuceConnectionFactory factory = TestRedis.standalone().lettuce();
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.reservoir(4)
			.timeSource(clock)
			.scriptTimeSource(clock)
			.build();
		try {
			KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("100/1m"));
			Decision inFirst = limiter.acquire(login);
			limiter.acquire(login);
			limiter.acquire(login);
			limiter.acquire(login);
			clock.advance(Duration.ofMinutes(1));
			// a fill of the next window: 4 taken, 1 used
			limiter.acquire(login);
			PermitReservoirs.Reservoir reservoir = limiter.reservoir(login);
			assertThat(reservoir.permits()).isEqualTo(3);
			limiter.refund(inFirst, List.of(login), 1);
			assertThat(reservoir.permits()).as("a permit of the first window stays spent there").isEqualTo(3);
			Decision inSecond = limiter.acquire(login);
			limiter.refund(inSecond, List.of(login), 1);
			assertThat(reservoir.permits()).isEqualTo(3);
		}
		finally {
			limiter.close();
			factory.destroy();
		}
	}

	@Test
	void inTwoTierModeThisInstancesOwnLimitsKeepAWindowsCountRatherThanGiveItToAnotherWindow() {
		LettuceConnectionFactory factory = TestRedis.standalone().lettuce();
		ManualTimeSource clock = new ManualTimeSource();
		InMemoryRateLimiter local = InMemoryRateLimiter.builder().timeSource(clock).build();
		RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofSeconds(2))
			.reservoir(4)
			.timeSource(clock)
			.scriptTimeSource(clock)
			.localFallback(local)
			.build();
		try {
			KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("10/1m"));
			Decision inFirst = limiter.acquire(login);
			clock.advance(Duration.ofMinutes(1));
			limiter.acquire(login);
			limiter.acquire(login);
			limiter.acquire(login);
			assertThat(local.inspect(List.of(login)).get(0).remaining()).isEqualTo(7);
			// the reservoir's mark (where it counted the permit, by Redis's clock) is not
			// a
			// window start of this instance's own limits: they keep the count, in either
			// window
			limiter.refund(inFirst, List.of(login), 1);
			assertThat(local.inspect(List.of(login)).get(0).remaining()).isEqualTo(7);
		}
		finally {
			limiter.close();
			factory.destroy();
		}
	}

	@Test
	void aCallDecidedByThisInstancesOwnLimitsWhileRedisIsDownGetsItsPermitsBackThere() {
		RedisServer server = RedisServer.start();
		LettuceConnectionFactory factory = server.endpoint().lettuce();
		RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix(TestRedis.uniquePrefix())
			.timeout(Duration.ofMillis(500))
			.failureMode(FailureMode.LOCAL)
			.build();
		try {
			KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("2/15m"));
			assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
			server.stop();
			Decision first = limiter.acquire(login);
			assertThat(first.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
			assertThat(limiter.acquire(login).isAllowed()).isTrue();
			assertThat(limiter.acquire(login).isAllowed()).isFalse();
			// the refund of a decision of this instance's own limits needs no Redis
			limiter.refund(first, List.of(login), 1);
			Decision again = limiter.acquire(login);
			assertThat(again.isAllowed()).isTrue();
			assertThat(again.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		}
		finally {
			limiter.close();
			factory.destroy();
			server.stop();
		}
	}

}
