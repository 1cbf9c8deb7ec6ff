package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.failure.BackendState;
import dev.ratelimit.core.redis.RedisRateLimiter.ClusterMaster;
import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * One master of a three-master Redis Cluster paused or killed under a
 * {@link RedisRateLimiter} in {@code allow} mode, with clients that spent their quota on
 * every master: the calls for keys on the two other masters are still decided, and
 * refused, by Redis. A paused master answers late: its keys are decided by this
 * instance's limits, which know those clients spent their quota. A killed master is down:
 * its keys fail open, as {@code allow} says. Once the paused master goes on, its keys are
 * decided by Redis again.
 */
class RedisClusterMasterDownTest {

	private static final Limit THREE_PER_HOUR = Limit.tokenBucket("3/1h");

	private static final int CLIENTS_PER_MASTER = 3;

	/** Calls per client after the master stopped answering. */
	private static final int ROUNDS = 20;

	private static RedisCluster cluster;

	private static LettuceConnectionFactory factory;

	private final Map<String, Integer> failures = new ConcurrentHashMap<>();

	private final List<RedisServer> paused = new ArrayList<>();

	@BeforeAll
	static void startCluster() {
		// the healthy masters keep serving their slots, whatever the cluster makes of the
		// stopped one
		cluster = RedisCluster.start("--cluster-require-full-coverage", "no");
		factory = cluster.lettuce();
	}

	@AfterAll
	static void stopCluster() {
		factory.destroy();
		cluster.close();
	}

	/**
	 * Lets a paused master go on and starts a killed one again (empty, with its slots),
	 * for the next test.
	 */
	@AfterEach
	void restoreMasters() {
		this.paused.forEach(RedisServer::resume);
		for (RedisServer master : cluster.nodes()) {
			if (!master.isRunning()) {
				master.restart();
			}
		}
		cluster.awaitReady(Duration.ofSeconds(30));
	}

	private RedisServer pause(int master) {
		RedisServer node = cluster.nodes().get(master);
		node.pause();
		this.paused.add(node);
		return node;
	}

	@Test
	void withAMasterPausedTheOtherMastersKeysAreStillRefusedByRedisAndItsOwnAreLimitedHere() {
		String prefix = TestRedis.uniquePrefix();
		try (RedisRateLimiter limiter = limiter(prefix)) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
			List<List<KeyedLimit>> clients = clientsByMaster(prefix);
			clients.forEach((onMaster) -> onMaster.forEach((client) -> exhaust(limiter, client)));
			RedisServer paused = pause(0);
			Outcomes outcomes = callEveryClient(limiter, clients);
			assertThat(outcomes.ofMaster(1)).containsOnly("BACKEND rejected");
			assertThat(outcomes.ofMaster(2)).containsOnly("BACKEND rejected");
			// late, not down: never a free pass, and the limits here know what Redis
			// allowed
			assertThat(outcomes.ofMaster(0)).containsOnly("LOCAL_FALLBACK rejected");
			assertThat(this.failures).containsOnlyKeys("TimeoutException");
			assertThat(limiter.clusterMasters()).extracting(ClusterMaster::slots, ClusterMaster::state)
				.containsExactlyInAnyOrder(tuple("0-5460", BackendState.LATE), tuple("5461-10921", BackendState.UP),
						tuple("10922-16383", BackendState.UP));
			assertThat(limiter.state()).isEqualTo(BackendState.LATE);
			paused.resume();
			KeyedLimit back = clients.get(0).get(0);
			Decision decision = awaitBackend(limiter, back);
			assertThat(decision.isAllowed()).as("Redis kept the client's spent quota").isFalse();
		}
	}

	@Test
	void withAMasterKilledOnlyItsOwnKeysFailOpen() {
		String prefix = TestRedis.uniquePrefix();
		try (RedisRateLimiter limiter = limiter(prefix)) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
			List<List<KeyedLimit>> clients = clientsByMaster(prefix);
			clients.forEach((onMaster) -> onMaster.forEach((client) -> exhaust(limiter, client)));
			cluster.nodes().get(0).stop();
			Outcomes outcomes = callEveryClient(limiter, clients);
			assertThat(outcomes.ofMaster(1)).containsOnly("BACKEND rejected");
			assertThat(outcomes.ofMaster(2)).containsOnly("BACKEND rejected");
			assertThat(outcomes.ofMaster(0)).containsOnly("FAILED_OPEN allowed");
			assertThat(limiter.isAvailable()).as("a master is down").isFalse();
			assertThat(limiter.clusterMasters()).extracting(ClusterMaster::slots, ClusterMaster::state)
				.containsExactlyInAnyOrder(tuple("0-5460", BackendState.DOWN), tuple("5461-10921", BackendState.UP),
						tuple("10922-16383", BackendState.UP));
		}
	}

	@Test
	void aCallOnAPausedMasterAndAHealthyOneIsDecidedHereAndACallOnAKilledOneFailsOpen() {
		String prefix = TestRedis.uniquePrefix();
		try (RedisRateLimiter limiter = limiter(prefix)) {
			assertThat(limiter.awaitReady(Duration.ofSeconds(10))).isTrue();
			List<List<KeyedLimit>> clients = clientsByMaster(prefix);
			KeyedLimit onPaused = clients.get(0).get(0);
			KeyedLimit onKilled = clients.get(1).get(0);
			KeyedLimit onHealthy = clients.get(2).get(0);
			exhaust(limiter, onHealthy);
			pause(0);
			Decision late = limiter.acquire(List.of(onHealthy, onPaused), 1);
			assertThat(late.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
			assertThat(late.isAllowed()).as("the healthy master's limit is spent here too").isFalse();
			cluster.nodes().get(1).stop();
			assertThat(limiter.acquire(onKilled).source()).isEqualTo(Decision.Source.FAILED_OPEN);
			Decision down = limiter.acquire(List.of(onHealthy, onKilled), 1);
			assertThat(down.source()).as("any master down: the failure mode decides")
				.isEqualTo(Decision.Source.FAILED_OPEN);
			assertThat(limiter.acquire(onHealthy).source()).isEqualTo(Decision.Source.BACKEND);
		}
	}

	private RedisRateLimiter limiter(String prefix) {
		return RedisRateLimiter.builder(factory)
			.keyPrefix(prefix)
			// long enough that a loaded machine does not make a healthy master late
			.timeout(Duration.ofMillis(500))
			.failureMode(FailureMode.ALLOW)
			.recoveryCheckInterval(Duration.ofMillis(50))
			.failureListener((ex) -> this.failures.merge(ex.getClass().getSimpleName(), 1, Integer::sum))
			.build();
	}

	/**
	 * Returns {@value #CLIENTS_PER_MASTER} clients whose keys live on each master, in
	 * slot order.
	 */
	private List<List<KeyedLimit>> clientsByMaster(String prefix) {
		RedisKeys keys = new RedisKeys(prefix);
		List<RedisServer> masters = cluster.nodes();
		List<List<KeyedLimit>> clients = new ArrayList<>();
		masters.forEach((master) -> clients.add(new ArrayList<>()));
		for (int i = 0; clients.stream().anyMatch((onMaster) -> onMaster.size() < CLIENTS_PER_MASTER); i++) {
			KeyedLimit client = new KeyedLimit("api", "client-" + i, THREE_PER_HOUR);
			List<KeyedLimit> onMaster = clients.get(masters.indexOf(cluster.nodeOf(RedisKeys.slot(keys.key(client)))));
			if (onMaster.size() < CLIENTS_PER_MASTER) {
				onMaster.add(client);
			}
		}
		return clients;
	}

	private static void exhaust(RedisRateLimiter limiter, KeyedLimit client) {
		for (int i = 0; i < 3; i++) {
			Decision decision = limiter.acquire(client);
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			assertThat(decision.isAllowed()).isTrue();
		}
		Decision refused = limiter.acquire(client);
		assertThat(refused.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(refused.isAllowed()).isFalse();
	}

	/**
	 * Calls every client {@value #ROUNDS} times, round-robin over the masters.
	 */
	private static Outcomes callEveryClient(RedisRateLimiter limiter, List<List<KeyedLimit>> clients) {
		Outcomes outcomes = new Outcomes();
		for (int round = 0; round < ROUNDS; round++) {
			for (int i = 0; i < CLIENTS_PER_MASTER; i++) {
				for (int master = 0; master < clients.size(); master++) {
					Decision decision = limiter.acquire(clients.get(master).get(i));
					outcomes.add(master, decision.source() + (decision.isAllowed() ? " allowed" : " rejected"));
				}
			}
		}
		return outcomes;
	}

	private static Decision awaitBackend(RedisRateLimiter limiter, KeyedLimit client) {
		Decision[] last = new Decision[1];
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
			last[0] = limiter.acquire(client);
			return last[0].source() == Decision.Source.BACKEND;
		});
		return last[0];
	}

	/** What the calls of each master got: source and verdict. */
	private static final class Outcomes {

		private final Map<Integer, List<String>> byMaster = new ConcurrentHashMap<>();

		void add(int master, String outcome) {
			this.byMaster.computeIfAbsent(master, (key) -> new ArrayList<>()).add(outcome);
		}

		List<String> ofMaster(int master) {
			return this.byMaster.getOrDefault(master, List.of());
		}

	}

}
