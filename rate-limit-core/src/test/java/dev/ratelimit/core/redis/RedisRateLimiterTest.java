package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link RedisRateLimiter} against a real Redis with Lettuce.
 */
@ExtendWith(RedisExtension.class)
class RedisRateLimiterTest {

	private static LettuceConnectionFactory connectionFactory;

	private final String prefix = TestRedis.uniquePrefix();

	private RedisRateLimiter limiter;

	@BeforeAll
	static void connect(RedisEndpoint redis) {
		connectionFactory = redis.lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@AfterEach
	void close() {
		if (this.limiter != null) {
			this.limiter.close();
		}
	}

	private RedisRateLimiter limiter(ManualTimeSource clock) {
		RedisRateLimiter.Builder builder = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(2));
		if (clock != null) {
			builder.timeSource(clock);
		}
		this.limiter = builder.build();
		return this.limiter;
	}

	private static int allowed(RedisRateLimiter limiter, KeyedLimit limit, int calls) {
		int allowed = 0;
		for (int i = 0; i < calls; i++) {
			Decision decision = limiter.acquire(limit);
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			allowed += decision.isAllowed() ? 1 : 0;
		}
		return allowed;
	}

	@Test
	void workedExampleOneHoldsInRedis() {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter redis = limiter(clock);
		KeyedLimit geocode = new KeyedLimit("geocode-burst", "client", Limit.tokenBucket("5/1s", 10));
		assertThat(allowed(redis, geocode, 12)).isEqualTo(10);
		clock.advance(Duration.ofSeconds(1));
		assertThat(allowed(redis, geocode, 6)).isEqualTo(5);
	}

	@Test
	void workedExampleTwoHoldsInRedis() {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter redis = limiter(clock);
		KeyedLimit empty = new KeyedLimit("p", "client",
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("2/1s").capacity(5).initial(0).build());
		assertThat(redis.inspect(List.of(empty)).get(0).remaining()).isZero();
		assertThat(redis.acquire(empty).isAllowed()).isFalse();
		clock.advance(Duration.ofSeconds(3));
		assertThat(allowed(redis, empty, 10)).isEqualTo(5);
	}

	@Test
	void readsTheTimeFromRedisWhenNoClockIsGiven() {
		RedisRateLimiter redis = limiter(null);
		KeyedLimit limit = new KeyedLimit("p", "client", Limit.tokenBucket("5/1s", 10));
		assertThat(allowed(redis, limit, 12)).isBetween(10, 11);
		Decision rejected = redis.acquire(limit);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(200));
	}

	@Test
	void decidesRatesBelowOnePerSecond() {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter redis = limiter(clock);
		KeyedLimit slow = new KeyedLimit("p", "client", Limit.tokenBucket("1/10s"));
		assertThat(redis.acquire(slow).isAllowed()).isTrue();
		Decision rejected = redis.acquire(slow);
		assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(10));
		clock.advance(Duration.ofMillis(9999));
		assertThat(redis.acquire(slow).isAllowed()).isFalse();
		clock.advance(Duration.ofMillis(1));
		assertThat(redis.acquire(slow).isAllowed()).isTrue();
	}

	@Test
	void aShapingBucketLetsACallOfCostZeroThroughWithoutWaiting() {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter redis = limiter(clock);
		// one call every 10 ms, waiting at most 15 ms: after two calls the water is 20 ms
		// deep
		KeyedLimit shaped = new KeyedLimit("p", "client",
				Limit.builder(Algorithm.LEAKY_BUCKET)
					.rate("100/1s")
					.mode(LeakMode.SHAPE)
					.maxWait(Duration.ofMillis(15))
					.build());
		assertThat(redis.acquire(shaped).delay()).isZero();
		assertThat(redis.acquire(shaped).delay()).isEqualTo(Duration.ofMillis(10));
		Decision rejected = redis.acquire(shaped);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfter()).isEqualTo(Duration.ofMillis(5));
		Decision free = redis.acquire(shaped, 0);
		assertThat(free.isAllowed()).isTrue();
		assertThat(free.delay()).isZero();
		assertThat(free.remaining()).isEqualTo(98);
		assertThat(redis.inspect(List.of(shaped)).get(0).allowed()).isTrue();
	}

	@Test
	void aTierChangeAppliesAtTheNextRequestAndKeepsWhatWasSpent() {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter redis = limiter(clock);
		KeyedLimit free = new KeyedLimit("api", "alice", Limit.tokenBucket("2/1m"));
		KeyedLimit paid = new KeyedLimit("api", "alice", Limit.tokenBucket("1000/1m"));
		assertThat(allowed(redis, free, 3)).isEqualTo(2);
		assertThat(redis.acquire(paid).isAllowed()).isTrue();
		assertThat(redis.acquire(paid).remaining()).isEqualTo(996);
	}

	@Test
	void reloadsTheScriptWhenRedisForgetsIt(RedisEndpoint endpoint) {
		RedisRateLimiter redis = limiter(new ManualTimeSource());
		KeyedLimit limit = new KeyedLimit("p", "client", Limit.tokenBucket("5/1s"));
		assertThat(redis.acquire(limit).source()).isEqualTo(Decision.Source.BACKEND);
		try (RespClient client = endpoint.client()) {
			client.command("SCRIPT", "FLUSH");
		}
		Decision decision = redis.acquire(limit);
		assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(decision.remaining()).isEqualTo(3);
	}

	@Test
	void releaseGivesBackAConcurrencyPermitOnce() {
		RedisRateLimiter redis = limiter(new ManualTimeSource());
		KeyedLimit limit = new KeyedLimit("payments", "merchant", Limit.concurrency(2));
		Decision first = redis.acquire(limit);
		Decision second = redis.acquire(limit);
		assertThat(first.leases()).hasSize(1);
		assertThat(redis.acquire(limit).isAllowed()).isFalse();
		redis.release(first);
		redis.release(first);
		assertThat(redis.acquire(limit).isAllowed()).isTrue();
		assertThat(redis.acquire(limit).isAllowed()).isFalse();
		redis.release(second);
		assertThat(redis.inspect(List.of(limit)).get(0).remaining()).isEqualTo(1);
	}

	@Test
	void inspectConsumesNothingAndResetForgetsState(RedisEndpoint endpoint) {
		RedisRateLimiter redis = limiter(new ManualTimeSource());
		KeyedLimit limit = new KeyedLimit("p", "client", Limit.fixedWindow("3/1h"));
		assertThat(redis.inspect(List.of(limit)).get(0).remaining()).isEqualTo(3);
		assertThat(keyCount(endpoint)).isZero();
		redis.acquire(limit, 2);
		assertThat(redis.inspect(List.of(limit)).get(0).remaining()).isEqualTo(1);
		assertThat(redis.inspect(List.of(limit)).get(0).remaining()).isEqualTo(1);
		redis.reset(limit);
		assertThat(keyCount(endpoint)).isZero();
		assertThat(redis.acquire(limit, 3).isAllowed()).isTrue();
	}

	@Test
	void storesNoRawClientKey(RedisEndpoint endpoint) {
		RedisRateLimiter redis = limiter(null);
		String apiKey = "sk_live_secret_4242";
		redis.acquire(List.of(new KeyedLimit("api", apiKey, Limit.tokenBucket("5/1s")),
				new KeyedLimit("api", apiKey, Limit.slidingWindowLog("5/1s"))), 1);
		try (RespClient client = endpoint.client()) {
			@SuppressWarnings("unchecked")
			List<String> keys = (List<String>) client.command("KEYS", this.prefix + ":*");
			assertThat(keys).hasSize(2).noneMatch((key) -> key.contains(apiKey));
		}
	}

	@Test
	void clientKeysThatUtf8WouldConfuseAreTwoClients() {
		RedisRateLimiter redis = limiter(new ManualTimeSource());
		// UTF-8 replaces an unpaired surrogate with '?'; 72 and 73 characters are where
		// the in-memory backend starts to hash client keys
		String[][] pairs = { { "bob\uD800", "bob?" }, { "\uDC00", "?" },
				{ "k".repeat(71) + "\uD800", "k".repeat(71) + "?" },
				{ "k".repeat(72) + "\uDC00", "k".repeat(72) + "?" } };
		Limit limit = Limit.fixedWindow("1/1h");
		for (String[] pair : pairs) {
			KeyedLimit surrogate = new KeyedLimit("api", pair[0], limit);
			KeyedLimit question = new KeyedLimit("api", pair[1], limit);
			assertThat(redis.acquire(surrogate).isAllowed()).isTrue();
			assertThat(redis.acquire(question).isAllowed()).as("%d characters", pair[1].length()).isTrue();
			assertThat(redis.acquire(surrogate).isAllowed()).isFalse();
			assertThat(redis.acquire(question).isAllowed()).isFalse();
		}
	}

	@Test
	void aRenewedConcurrencyPermitIsHeldPastItsLeaseTime() {
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter redis = limiter(clock);
		KeyedLimit stream = new KeyedLimit("streams", "client",
				Limit.builder(Algorithm.CONCURRENCY).max(1).leaseTime(Duration.ofSeconds(1)).build());
		Decision first = redis.acquire(stream);
		assertThat(first.isAllowed()).isTrue();
		// the first call is still in flight 1.1 s later, renewed on its way: its permit
		// still counts
		clock.advance(Duration.ofMillis(500));
		redis.renew(first);
		clock.advance(Duration.ofMillis(600));
		Decision second = redis.acquire(stream);
		assertThat(second.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(second.isAllowed()).isFalse();
		// a renewal after the release brings nothing back
		redis.release(first);
		redis.renew(first);
		Decision third = redis.acquire(stream);
		assertThat(third.isAllowed()).isTrue();
		// without renewals a lease lapses after its lease time, as the safety net for a
		// crashed caller
		clock.advance(Duration.ofMillis(1100));
		assertThat(redis.acquire(stream).isAllowed()).isTrue();
	}

	@Test
	void decidesNothingForNoLimitsAndRejectsANegativeCost() {
		RedisRateLimiter redis = limiter(null);
		assertThat(redis.acquire(List.of(), 1).isAllowed()).isTrue();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> redis.acquire(new KeyedLimit("p", "k", Limit.tokenBucket("1/1s")), -1))
			.withMessageContaining("-1");
	}

	@Test
	void pingsRedisWithADecisionWhoseKeyExpiresAtOnce(RedisEndpoint redis) {
		RedisRateLimiter limiter = limiter(null);
		limiter.ping();
		assertThat(limiter.isAvailable()).isTrue();
		assertThat(limiter.failureMode()).isEqualTo(FailureMode.ALLOW);
		try (RespClient client = redis.client()) {
			for (Object key : (List<?>) client.command("KEYS", this.prefix + "*")) {
				// the health key lives a millisecond (-2: already gone)
				assertThat((Long) client.command("PTTL", key.toString())).isBetween(-2L, 1L);
			}
		}
	}

	@Test
	void aRedisThatAnswersPingButRefusesTheScriptIsNotHealthy(RedisEndpoint redis) {
		String user = "ping-only-" + this.prefix.replaceAll("[^A-Za-z0-9]", "");
		try (RespClient client = redis.client()) {
			client.command("ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all", "-fcall", "-evalsha", "-eval",
					"-function");
			RedisStandaloneConfiguration configuration = redis.configuration();
			configuration.setUsername(user);
			configuration.setPassword("secret");
			LettuceConnectionFactory pingOnly = new LettuceConnectionFactory(configuration);
			pingOnly.afterPropertiesSet();
			pingOnly.start();
			RedisRateLimiter limiter = RedisRateLimiter.builder(pingOnly)
				.keyPrefix(this.prefix)
				.timeout(Duration.ofSeconds(2))
				.build();
			try {
				assertThat(pingOnly.getConnection().ping()).isEqualTo("PONG");
				assertThatExceptionOfType(DataAccessException.class).isThrownBy(limiter::ping)
					.havingRootCause()
					.withMessageContaining("NOPERM");
				assertThat(limiter.isAvailable()).isFalse();
				assertThat(limiter.acquire(new KeyedLimit("p", "k", Limit.tokenBucket("5/1s"))).source())
					.isEqualTo(Decision.Source.FAILED_OPEN);
			}
			finally {
				limiter.close();
				pingOnly.destroy();
				client.command("ACL", "DELUSER", user);
			}
		}
	}

	@Test
	void builderRejectsBadValuesNamingThem() {
		RedisRateLimiter.Builder builder = RedisRateLimiter.builder(connectionFactory);
		assertThatIllegalArgumentException().isThrownBy(() -> builder.timeout(Duration.ZERO))
			.withMessageContaining("timeout")
			.withMessageContaining("PT0S");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.coolDown(Duration.ofSeconds(-1)))
			.withMessageContaining("coolDown");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.reservoir(-5)).withMessageContaining("-5");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.keyPrefix("rl{x}"))
			.withMessageContaining("rl{x}");
	}

	private long keyCount(RedisEndpoint endpoint) {
		try (RespClient client = endpoint.client()) {
			return ((List<?>) client.command("KEYS", this.prefix + ":*")).size();
		}
	}

}
