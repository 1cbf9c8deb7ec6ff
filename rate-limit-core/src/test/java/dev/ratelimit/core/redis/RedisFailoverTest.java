package dev.ratelimit.core.redis;

import java.time.Duration;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisSentinel;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A master killed under a {@link RedisRateLimiter}, with Sentinel and with Redis Cluster:
 * decisions come back from the promoted replica by themselves, and a client that spent
 * its quota before the failover (replicated) is still refused after it. How fast is a
 * figure of the reliability campaign (docs/RELIABILITY.md), not asserted here.
 */
class RedisFailoverTest {

	private static final Limit FIVE_PER_HOUR = Limit.tokenBucket("5/1h");

	@Test
	void aSentinelFailoverKeepsAnExhaustedClientRefused() {
		try (RedisSentinel sentinel = RedisSentinel.start()) {
			LettuceConnectionFactory factory = sentinel.lettuce();
			try (RedisRateLimiter limiter = limiter(factory)) {
				assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
				KeyedLimit client = new KeyedLimit("api", "sentinel-client", FIVE_PER_HOUR);
				exhaust(limiter, client);
				replicate(sentinel.master());
				sentinel.killMaster(Duration.ofSeconds(30));
				assertRefusedByRedis(limiter, client);
				KeyedLimit fresh = new KeyedLimit("api", "sentinel-fresh", FIVE_PER_HOUR);
				assertThat(limiter.acquire(fresh).isAllowed()).isTrue();
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void aClusterMasterFailoverKeepsAnExhaustedClientRefused() {
		try (RedisCluster cluster = RedisCluster.startWithReplicas()) {
			LettuceConnectionFactory factory = cluster.lettuce();
			try (RedisRateLimiter limiter = limiter(factory)) {
				assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
				KeyedLimit client = clientOfTheFirstMaster(cluster);
				exhaust(limiter, client);
				RedisServer master = cluster.nodes().get(0);
				replicate(master);
				cluster.killMaster(0, Duration.ofSeconds(30));
				assertRefusedByRedis(limiter, client);
				// the client's key follows its slot to the promoted replica, and the
				// killed master's state is forgotten with it
				await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(limiter::isAvailable);
			}
			finally {
				factory.destroy();
			}
		}
	}

	private static RedisRateLimiter limiter(LettuceConnectionFactory factory) {
		return RedisRateLimiter.builder(factory)
			.keyPrefix("failover")
			.timeout(Duration.ofMillis(500))
			.failureMode(FailureMode.ALLOW)
			.recoveryCheckInterval(Duration.ofMillis(50))
			.build();
	}

	private static void exhaust(RedisRateLimiter limiter, KeyedLimit client) {
		for (int i = 0; i < 5; i++) {
			Decision decision = limiter.acquire(client);
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(decision.isAllowed()).isTrue();
		}
		Decision sixth = limiter.acquire(client);
		assertThat(sixth.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(sixth.isAllowed()).isFalse();
	}

	/**
	 * Waits until the replica has every write the master took so far: a write of its own,
	 * then WAIT, which returns once the replica has acknowledged the replication stream
	 * up to that write.
	 */
	private static void replicate(RedisServer master) {
		try (RespClient client = master.endpoint().client()) {
			client.command("SET", "{failover}marker", "written");
			assertThat(client.number("WAIT", "1", "5000")).isEqualTo(1);
		}
	}

	/**
	 * Waits until decisions come from Redis again (the promoted replica), then checks
	 * that the client is refused.
	 */
	private static void assertRefusedByRedis(RedisRateLimiter limiter, KeyedLimit client) {
		Decision[] last = new Decision[1];
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
			last[0] = limiter.acquire(client);
			return last[0].source() == Decision.Source.BACKEND;
		});
		assertThat(last[0].isAllowed()).as("the exhausted client after the failover").isFalse();
	}

	private static KeyedLimit clientOfTheFirstMaster(RedisCluster cluster) {
		RedisKeys keys = new RedisKeys("failover");
		RedisServer first = cluster.nodes().get(0);
		for (int i = 0;; i++) {
			KeyedLimit candidate = new KeyedLimit("api", "cluster-client-" + i, FIVE_PER_HOUR);
			if (cluster.nodeOf(RedisKeys.slot(keys.key(candidate))) == first) {
				return candidate;
			}
		}
	}

}
