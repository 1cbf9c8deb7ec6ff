package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A concurrency permit held by a call still in flight is renewed, so it outlives its
 * lease time, in memory and in Redis alike: the example (max 1, a 1 s lease, a
 * second call 1.1 s into the first) is rejected; a renewal after the release brings
 * nothing back; a renewed lease is the last to expire, for retry-after as for Redis's
 * sorted set; and in memory, a key whose only activity is a renewed call is kept as long
 * as the call lasts.
 */
@ExtendWith(RedisExtension.class)
class LeaseRenewalTest {

	private static final Limit ONE_PER_SECOND_LEASE = Limit.builder(Algorithm.CONCURRENCY)
		.max(1)
		.leaseTime(Duration.ofSeconds(1))
		.build();

	private static LettuceConnectionFactory connectionFactory;

	private final List<AutoCloseable> closing = new ArrayList<>();

	private final String prefix = TestRedis.uniquePrefix();

	@BeforeAll
	static void connect(RedisEndpoint redis) {
		connectionFactory = redis.lettuce();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable limiter : this.closing) {
			limiter.close();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void aRenewedPermitIsStillHeldOneAndATenthSecondsIntoACallWithAOneSecondLease(String backend) {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = limiter(backend, clock);
		KeyedLimit stream = new KeyedLimit("streams", "client", ONE_PER_SECOND_LEASE);
		Decision first = limiter.acquire(stream);
		assertThat(first.isAllowed()).isTrue();
		clock.advance(Duration.ofMillis(500));
		limiter.renew(first);
		clock.advance(Duration.ofMillis(600));
		assertThat(limiter.acquire(stream).isAllowed()).as("a second call 1.1 s into the first").isFalse();
		limiter.release(first);
		limiter.renew(first);
		Decision second = limiter.acquire(stream);
		assertThat(second.isAllowed()).as("after the release, whatever a late renewal does").isTrue();
		limiter.release(second);
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void aRenewedLeaseExpiresLastSoTheRetryAfterIsTheOtherLeases(String backend) {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = limiter(backend, clock);
		KeyedLimit pool = new KeyedLimit("pool", "client",
				Limit.builder(Algorithm.CONCURRENCY).max(2).leaseTime(Duration.ofSeconds(1)).build());
		Decision a = limiter.acquire(pool);
		clock.advance(Duration.ofMillis(100));
		Decision b = limiter.acquire(pool);
		assertThat(a.isAllowed()).isTrue();
		assertThat(b.isAllowed()).isTrue();
		clock.advance(Duration.ofMillis(100));
		limiter.renew(a);
		clock.advance(Duration.ofMillis(100));
		Decision third = limiter.acquire(pool);
		assertThat(third.isAllowed()).isFalse();
		// b, taken at 100 ms, expires at 1.1 s; a, renewed at 200 ms, at 1.2 s: the first
		// permit back is b's
		assertThat(third.retryAfter()).isEqualTo(Duration.ofMillis(800));
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void aCallRenewedForAnHourKeepsItsPermit(String backend) {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = limiter(backend, clock);
		KeyedLimit stream = new KeyedLimit("streams", "hour-long", ONE_PER_SECOND_LEASE);
		Decision held = limiter.acquire(stream);
		for (int i = 0; i < 3600 * 3; i++) {
			clock.advance(Duration.ofMillis(333));
			limiter.renew(held);
			if (i % 256 == 0) {
				// Redis's renewals are sent without waiting: a read on the same
				// connection lets them land, as the
				// third of a lease time between two renewals does in production
				limiter.inspect(List.of(stream));
			}
		}
		if (limiter instanceof InMemoryRateLimiter memory) {
			memory.cleanUp();
		}
		assertThat(limiter.acquire(stream).isAllowed()).isFalse();
		limiter.release(held);
		assertThat(limiter.acquire(stream).isAllowed()).isTrue();
	}

	private RateLimiter limiter(String backend, ManualTimeSource clock) {
		if (backend.equals("memory")) {
			return InMemoryRateLimiter.builder().timeSource(clock).build();
		}
		RedisRateLimiter redis = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(2))
			.timeSource(clock)
			.build();
		this.closing.add(redis);
		return redis;
	}

}
