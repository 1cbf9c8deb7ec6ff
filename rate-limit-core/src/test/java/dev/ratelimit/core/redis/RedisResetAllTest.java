package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisRateLimiter#resetAll()} against a real Redis: every key of the limiter's
 * prefix goes, with either client, and nothing else does.
 */
@ExtendWith(RedisExtension.class)
class RedisResetAllTest {

	private final String prefix = TestRedis.uniquePrefix();

	@Test
	void deletesEveryKeyOfItsPrefixWithLettuce(RedisEndpoint endpoint) {
		LettuceConnectionFactory factory = endpoint.lettuce();
		try {
			deletesEveryKeyOfItsPrefix(endpoint, factory);
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void deletesEveryKeyOfItsPrefixWithJedis(RedisEndpoint endpoint) {
		JedisConnectionFactory factory = endpoint.jedis();
		try {
			deletesEveryKeyOfItsPrefix(endpoint, factory);
		}
		finally {
			factory.destroy();
		}
	}

	private void deletesEveryKeyOfItsPrefix(RedisEndpoint endpoint, RedisConnectionFactory factory) {
		ManualTimeSource clock = new ManualTimeSource();
		// a prefix that starts with this one, and a prefix with a glob character
		String longer = this.prefix + ":other";
		String glob = this.prefix + "*";
		try (RedisRateLimiter limiter = limiter(factory, this.prefix, clock, 0);
				RedisRateLimiter other = limiter(factory, longer, clock, 0);
				RedisRateLimiter starred = limiter(factory, glob, clock, 0)) {
			List<KeyedLimit> limits = new ArrayList<>();
			// more keys than one SCAN step or UNLINK takes
			for (int i = 0; i < 1200; i++) {
				limits.add(new KeyedLimit("api", "client-" + i, Limit.fixedWindow("1/1h")));
			}
			KeyedLimit concurrency = new KeyedLimit("streams", "client-0", Limit.concurrency(1));
			for (KeyedLimit limit : limits) {
				assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			}
			assertThat(limiter.acquire(concurrency).isAllowed()).isTrue();
			assertThat(other.acquire(limits.get(0)).isAllowed()).isTrue();
			assertThat(starred.acquire(limits.get(0)).isAllowed()).isTrue();
			try (RespClient client = endpoint.client()) {
				client.command("SET", this.prefix + ":not-a-limit", "kept");
				assertThat(keys(client, this.prefix + ":{*")).hasSize(1201);

				limiter.resetAll();

				assertThat(keys(client, this.prefix + ":{*")).isEmpty();
				assertThat(client.text("GET", this.prefix + ":not-a-limit")).isEqualTo("kept");
				assertThat(keys(client, longer + ":{*")).hasSize(1);
				assertThat(other.acquire(limits.get(0)).isAllowed()).isFalse();
				assertThat(starred.acquire(limits.get(0)).isAllowed()).isFalse();
				assertThat(limiter.acquire(limits.get(0)).isAllowed()).isTrue();
				assertThat(limiter.acquire(limits.get(1199)).isAllowed()).isTrue();
				assertThat(limiter.acquire(concurrency).isAllowed()).isTrue();

				// unescaped, its pattern would match the keys of the other two
				starred.resetAll();

				assertThat(keys(client, this.prefix + ":{*")).hasSize(3);
				assertThat(keys(client, longer + ":{*")).hasSize(1);
				assertThat(starred.acquire(limits.get(0)).isAllowed()).isTrue();
				client.command("DEL", this.prefix + ":not-a-limit");
			}
		}
	}

	@Test
	void forgetsThePermitsOfTheReservoirAndItsLastRefusal(RedisEndpoint endpoint) {
		LettuceConnectionFactory factory = endpoint.lettuce();
		try (RedisRateLimiter limiter = limiter(factory, this.prefix, new ManualTimeSource(), 5)) {
			KeyedLimit limit = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1h"));
			for (int i = 0; i < 10; i++) {
				assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			}
			// refused from the reservoir's last refusal, without asking Redis
			assertThat(limiter.acquire(limit).isAllowed()).isFalse();
			limiter.resetAll();
			assertThat(limiter.inspect(List.of(limit))).extracting(LimitStatus::remaining).containsExactly(10L);
			for (int i = 0; i < 10; i++) {
				assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			}
			assertThat(limiter.acquire(limit).isAllowed()).isFalse();
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void forgetsTheLimitsOfItsOwnInstanceToo(RedisEndpoint endpoint) {
		LettuceConnectionFactory factory = endpoint.lettuce();
		ManualTimeSource clock = new ManualTimeSource();
		InMemoryRateLimiter local = InMemoryRateLimiter.builder().timeSource(clock).build();
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(2))
			.timeSource(clock)
			.localFallback(local)
			.build()) {
			KeyedLimit limit = new KeyedLimit("api", "alice", Limit.fixedWindow("1/1h"));
			assertThat(limiter.acquire(limit).isAllowed()).isTrue();
			assertThat(local.keyCount()).isEqualTo(1);
			limiter.resetAll();
			assertThat(local.keyCount()).isZero();
		}
		finally {
			factory.destroy();
		}
	}

	private static RedisRateLimiter limiter(RedisConnectionFactory factory, String prefix, ManualTimeSource clock,
			long reservoir) {
		return RedisRateLimiter.builder(factory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(2))
			.timeSource(clock)
			.reservoir(reservoir)
			.build();
	}

	private static List<?> keys(RespClient client, String pattern) {
		return (List<?>) client.command("KEYS", pattern);
	}

}
