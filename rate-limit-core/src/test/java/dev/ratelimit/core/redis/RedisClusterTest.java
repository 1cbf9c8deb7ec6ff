package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend on a three-master Redis Cluster: four instances share each client's
 * quota exactly with keys on every master, a call whose limits live in different slots
 * gives back what it took when a later slot rejects, whether it waits or not, and a
 * health check writes to every master.
 */
class RedisClusterTest {

	private static RedisCluster cluster;

	private static final List<LettuceConnectionFactory> factories = new ArrayList<>();

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start();
		for (int i = 0; i < 4; i++) {
			factories.add(cluster.lettuce());
		}
	}

	@AfterAll
	static void stopCluster() {
		factories.forEach(LettuceConnectionFactory::destroy);
		cluster.close();
	}

	@Test
	void fourInstancesShareEachClientsQuotaExactlyWithKeysOnEveryMaster() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		Limit limit = Limit.tokenBucket("20/1h");
		List<KeyedLimit> clients = new ArrayList<>();
		Set<RedisServer> masters = new HashSet<>();
		for (int i = 0; i < 9; i++) {
			KeyedLimit client = new KeyedLimit("api", "client-" + i, limit);
			clients.add(client);
			masters.add(cluster.nodeOf(RedisKeys.slot(keys.key(client))));
		}
		assertThat(masters).hasSize(3);
		List<RedisRateLimiter> fleet = fleet(prefix);
		try {
			int[] allowed = FleetSupport.hammer(fleet, 2, 9 * 40,
					(attempt) -> List.of(clients.get(attempt % clients.size())), clients.size(),
					(attempt) -> attempt % clients.size());
			assertThat(allowed).containsOnly(20);
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
	}

	@Test
	void givesBackWhatAnEarlierSlotTookWhenALaterSlotRejects() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		KeyedLimit global = new KeyedLimit("global", "", Limit.tokenBucket("100/1h"));
		List<KeyedLimit> clients = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			KeyedLimit client = new KeyedLimit("per-client", "client-" + i, Limit.slidingWindowLog("2/1h"));
			assertThat(RedisKeys.slot(keys.key(client))).isNotEqualTo(RedisKeys.slot(keys.key(global)));
			clients.add(client);
		}
		List<RedisRateLimiter> fleet = fleet(prefix);
		try {
			int[] allowed = FleetSupport.hammer(fleet, 1, 5 * 6,
					(attempt) -> List.of(global, clients.get(attempt % clients.size())), 1, (attempt) -> 0);
			assertThat(allowed[0]).isEqualTo(10);
			// give-backs are sent without waiting for them: wait until every instance's
			// have been answered
			for (RedisRateLimiter limiter : fleet) {
				assertThat(limiter.awaitCompensations(Duration.ofSeconds(5))).isTrue();
			}
			long remaining = fleet.get(0).inspect(List.of(global)).get(0).remaining();
			assertThat(remaining).isEqualTo(90);
			Decision rejected = fleet.get(0).acquire(List.of(global, clients.get(0)), 1);
			assertThat(rejected.isAllowed()).isFalse();
			assertThat(rejected.statuses()).hasSize(2);
			assertThat(rejected.rejectedBy()).extracting((status) -> status.target().policy())
				.containsExactly("per-client");
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
	}

	@Test
	void anAsynchronousCallAcrossSlotsDecidesSlotAfterSlotAndGivesBackWhatAnEarlierSlotTook() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		KeyedLimit global = new KeyedLimit("global", "", Limit.tokenBucket("100/1h"));
		KeyedLimit client = new KeyedLimit("per-client", "client", Limit.slidingWindowLog("2/1h"));
		assertThat(RedisKeys.slot(keys.key(client))).isNotEqualTo(RedisKeys.slot(keys.key(global)));
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.build()) {
			List<Decision> decisions = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				decisions.add(limiter.acquireAsync(List.of(global, client), 1).get(10, TimeUnit.SECONDS));
			}
			assertThat(decisions).extracting(Decision::source).containsOnly(Decision.Source.BACKEND);
			assertThat(decisions).extracting(Decision::isAllowed)
				.containsExactly(true, true, false, false, false, false);
			assertThat(decisions.get(2).rejectedBy()).extracting((status) -> status.target().policy())
				.containsExactly("per-client");
			assertThat(limiter.awaitCompensations(Duration.ofSeconds(5))).isTrue();
			assertThat(limiter.inspect(List.of(global)).get(0).remaining()).isEqualTo(98);
		}
	}

	@Test
	void reservoirsOfACallAcrossSlotsAreFilledSlotBySlotWaitingOrNot() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		KeyedLimit global = new KeyedLimit("global", "", Limit.tokenBucket("100/1h"));
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.reservoir(5)
			.build()) {
			for (boolean waiting : new boolean[] { true, false }) {
				KeyedLimit client = new KeyedLimit("per-client", "client-" + waiting, Limit.slidingWindowLog("2/1h"));
				assertThat(RedisKeys.slot(keys.key(client))).isNotEqualTo(RedisKeys.slot(keys.key(global)));
				List<Decision> decisions = new ArrayList<>();
				for (int i = 0; i < 5; i++) {
					decisions.add(waiting ? limiter.acquire(List.of(global, client), 1)
							: limiter.acquireAsync(List.of(global, client), 1).get(10, TimeUnit.SECONDS));
				}
				assertThat(decisions).extracting(Decision::source).containsOnly(Decision.Source.BACKEND);
				assertThat(decisions).extracting(Decision::isAllowed).containsExactly(true, true, false, false, false);
				assertThat(decisions.get(2).rejectedBy()).extracting((status) -> status.target().policy())
					.containsExactly("per-client");
			}
			// Redis counts what the reservoir holds as spent, and nothing is lost: the
			// 4 admitted and what is held here
			long remaining = limiter.inspect(List.of(global)).get(0).remaining();
			assertThat(remaining).isEqualTo(100 - 4 - limiter.reservoir(global).permits());
		}
	}

	@Test
	void concurrencyPermitsTakenAsynchronouslyInTwoSlotsAreGivenBackByReleaseAsync() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		KeyedLimit global = new KeyedLimit("global", "", Limit.concurrency(1));
		KeyedLimit client = new KeyedLimit("per-client", "client", Limit.concurrency(1));
		assertThat(RedisKeys.slot(keys.key(client))).isNotEqualTo(RedisKeys.slot(keys.key(global)));
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.build()) {
			Decision held = limiter.acquireAsync(List.of(global, client), 1).get(10, TimeUnit.SECONDS);
			assertThat(held.isAllowed()).isTrue();
			assertThat(held.leases()).hasSize(2);
			assertThat(limiter.acquireAsync(List.of(client), 1).get(10, TimeUnit.SECONDS).isAllowed()).isFalse();
			limiter.releaseAsync(held).get(10, TimeUnit.SECONDS);
			Decision again = limiter.acquireAsync(List.of(global, client), 1).get(10, TimeUnit.SECONDS);
			assertThat(again.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(again.isAllowed()).isTrue();
		}
	}

	@Test
	void aGiveBackToASlidingLogKeepsTheKeysExpiry() {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		KeyedLimit log = new KeyedLimit("per-client", "client", Limit.slidingWindowLog("5/1h"));
		KeyedLimit global = new KeyedLimit("global", "", Limit.tokenBucket("1/1h"));
		String logKey = keys.key(log);
		assertThat(RedisKeys.slot(logKey)).isNotEqualTo(RedisKeys.slot(keys.key(global)));
		// both calls at the same microsecond, so that the log keeps one member for both:
		// "T:2"
		long now = System.currentTimeMillis() * 1000;
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.timeSource(() -> now)
			.build(); RespClient node = cluster.nodeOf(RedisKeys.slot(logKey)).endpoint().client()) {
			assertThat(limiter.acquire(List.of(log, global), 1).isAllowed()).isTrue();
			// the log's slot takes a second permit, the global slot rejects, and the
			// log's is given back
			assertThat(limiter.acquire(List.of(log, global), 1).isAllowed()).isFalse();
			assertThat(limiter.awaitCompensations(Duration.ofSeconds(5))).isTrue();
			assertThat(node.command("ZRANGE", logKey, "0", "-1")).asString().contains(":1");
			// the key outlives its window (an hour) no longer than that, whatever the
			// give-back did
			assertThat((Long) node.command("PTTL", logKey)).isPositive();
		}
	}

	@Test
	void aSlotAfterARejectingOneSeesItsKeysForTheFirstTimeAsInMemory() {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		KeyedLimit exhausted = new KeyedLimit("global", "", Limit.tokenBucket("1/1h"));
		KeyedLimit filling = new KeyedLimit("per-client", "client",
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("10/1s").capacity(10).initial(0).build());
		assertThat(RedisKeys.slot(keys.key(exhausted))).isNotEqualTo(RedisKeys.slot(keys.key(filling)));
		AtomicLong clock = new AtomicLong(System.currentTimeMillis() * 1000);
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.timeSource(clock::get)
			.build()) {
			assertThat(limiter.acquire(exhausted).isAllowed()).isTrue();
			// rejected by the first slot: the second slot's bucket, empty at first sight,
			// starts filling now
			assertThat(limiter.acquire(List.of(exhausted, filling), 1).isAllowed()).isFalse();
			clock.addAndGet(1_000_000);
			assertThat(limiter.inspect(List.of(filling)).get(0).remaining()).isEqualTo(10);
		}
	}

	@Test
	void aPingWritesAHealthKeyOnEveryMasterInASlotItServes() {
		String prefix = TestRedis.uniquePrefix();
		// on a clock of the test's, keys outlive the check: they can be counted
		long now = System.currentTimeMillis() * 1000;
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factories.get(0))
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.timeSource(() -> now)
			.build()) {
			// once the topology is known: before, a check writes to one master
			assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
			limiter.ping();
			for (RedisServer node : cluster.nodes()) {
				try (RespClient client = node.endpoint().client()) {
					assertThat((List<?>) client.command("KEYS", prefix + ":{" + RedisRateLimiter.HEALTH_POLICY + ":*"))
						.as("health keys on " + node)
						.hasSize(1);
				}
			}
		}
	}

	@Test
	void resetAllDeletesTheKeysOfEveryMasterWithLettuceAndJedis() {
		resetAllDeletesTheKeysOfEveryMaster(factories.get(0));
		JedisConnectionFactory jedis = new JedisConnectionFactory(cluster.configuration());
		jedis.afterPropertiesSet();
		jedis.start();
		try {
			resetAllDeletesTheKeysOfEveryMaster(jedis);
		}
		finally {
			jedis.destroy();
		}
	}

	private static void resetAllDeletesTheKeysOfEveryMaster(RedisConnectionFactory factory) {
		String prefix = TestRedis.uniquePrefix();
		RedisKeys keys = new RedisKeys(prefix);
		List<KeyedLimit> clients = new ArrayList<>();
		Set<RedisServer> masters = new HashSet<>();
		for (int i = 0; i < 30; i++) {
			KeyedLimit client = new KeyedLimit("api", "client-" + i, Limit.fixedWindow("1/1h"));
			clients.add(client);
			masters.add(cluster.nodeOf(RedisKeys.slot(keys.key(client))));
		}
		assertThat(masters).hasSize(3);
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.build()) {
			for (KeyedLimit client : clients) {
				assertThat(limiter.acquire(client).isAllowed()).isTrue();
			}
			assertThat(keyCount(prefix)).isEqualTo(clients.size());
			limiter.resetAll();
			assertThat(keyCount(prefix)).isZero();
			for (KeyedLimit client : clients) {
				assertThat(limiter.acquire(client).isAllowed()).isTrue();
			}
		}
	}

	private static long keyCount(String prefix) {
		long count = 0;
		for (RedisServer node : cluster.nodes()) {
			try (RespClient client = node.endpoint().client()) {
				count += ((List<?>) client.command("KEYS", prefix + ":*")).size();
			}
		}
		return count;
	}

	private static List<RedisRateLimiter> fleet(String prefix) {
		return factories.stream()
			.map((factory) -> RedisRateLimiter.builder(factory)
				.keyPrefix(prefix)
				.timeout(Duration.ofSeconds(5))
				.build())
			.toList();
	}

}
