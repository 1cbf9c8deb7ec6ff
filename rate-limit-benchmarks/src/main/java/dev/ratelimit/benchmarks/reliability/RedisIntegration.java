package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

import dev.ratelimit.benchmarks.reliability.AppIntegration.Recorder;
import dev.ratelimit.benchmarks.reliability.AppIntegration.Version;
import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;

/**
 * The cases of issue 32 that need the sample on Redis: a late answer's cool-down with
 * {@code /actuator/health} polled hard (finding 8a), on a standalone server; and one
 * master of a three-master cluster killed (finding 7).
 */
final class RedisIntegration implements AppIntegration.Cases {

	private static final String PATH = SampleIntegration.PATH;

	/** How long Redis holds writes: the late answer, then in time again. */
	private static final int PAUSE_MILLIS = 600;

	private static final Duration WATCH = Duration.ofSeconds(3);

	private static final int CLUSTER_CLIENTS = 30;

	private final int clusterRounds;

	RedisIntegration(Settings settings) {
		this.clusterRounds = settings.pick(16, 32);
	}

	@Override
	public void describe(Recorder recorder) {
		recorder.note("`f8a.sample.health-*`: the sample on a Redis of its own (`redis` profile, "
				+ "`on-backend-failure: local`, `redis.timeout` 100ms), a policy of 6/1h keyed by `X-Client`. A "
				+ "client spends its 6 permits (Redis and this instance's local limits both count them); Redis is "
				+ "emptied (`FLUSHALL`), so that Redis would admit the client again and the local limits would "
				+ "not; then `CLIENT PAUSE " + PAUSE_MILLIS + " WRITE`, and another client's request is answered "
				+ "late, which starts the one-second cool-down (its latency is `late-call-ms`). The spent client "
				+ "then sends a request every 20 ms: `first-redis-decision-ms` is the time from the pause to its "
				+ "first 200, the first decision made by Redis again. `health-polled`: meanwhile `GET "
				+ "/actuator/health` is sent back to back (`health-answers`); `health-not-polled`: the control.");
		recorder.note("`f7.sample.cluster-master-killed`: the sample on a three-master Redis Cluster of its own "
				+ "(no replicas, `cluster-require-full-coverage no`, so the other masters go on serving their "
				+ "slots), `on-backend-failure: allow`, `redis.timeout` 250ms, a policy of 3/1h keyed by "
				+ "`X-Client`. Each master in turn: " + CLUSTER_CLIENTS + " new clients spend their permits (each "
				+ "client's master found by its key), the master is killed (SIGKILL), 1 s later every client sends "
				+ this.clusterRounds + " more requests, round-robin, and the master is started again (empty). "
				+ "Sums over the three kills: `admitted-other-masters`, the requests of clients on the two live "
				+ "masters that were let through (they had spent their permits: each one admitted failed open); "
				+ "`script-calls-other-masters`, the decision script calls those masters received meanwhile "
				+ "(`INFO commandstats`; at least one per request when Redis decides them, a few more for the "
				+ "limiter's own probes; far fewer when this instance decides them by its own limits instead); "
				+ "`admitted-killed-master`, the requests of clients on the killed master's "
				+ "slots that were let through, as `allow` says for a master that is down.");
	}

	@Override
	public void run(Version version, Processes processes, Recorder recorder) {
		coolDown(version, processes, recorder);
		cluster(version, processes, recorder);
	}

	private static void coolDown(Version version, Processes processes, Recorder recorder) {
		RedisServer redis = processes.redis();
		try (redis;
				IntegrationApp app = version.sample("redis")
					.redis(redis)
					.properties("ratelimit.on-backend-failure", "local", "ratelimit.redis.timeout", "100ms",
							"ratelimit.policies.cool-down.key", "header:X-Client",
							"ratelimit.policies.cool-down.limits[0].rate", "6/1h", "ratelimit.filters[0].patterns",
							"/api/reverse", "ratelimit.filters[0].policies", "cool-down")
					.start(processes)) {
			if (!app.started()) {
				throw new IllegalStateException(app + " did not start: " + app.failureDescription());
			}
			coolDown(version, app, redis, true, recorder);
			// the late state is over once Redis decided again; leave the next run a quiet
			// Redis
			Pause.millis(1500);
			coolDown(version, app, redis, false, recorder);
		}
	}

	private static void coolDown(Version version, IntegrationApp app, RedisServer redis, boolean polled,
			Recorder recorder) {
		String row = polled ? "f8a.sample.health-polled" : "f8a.sample.health-not-polled";
		HttpCall spent = HttpCall.get(PATH).header("X-Client", "spent-" + row);
		for (int i = 0; i < 6; i++) {
			app.status(spent);
		}
		int refused = app.status(spent);
		if (refused != 429) {
			recorder.note("`" + row + "` " + version.label() + ": the 7th request of the spent client got " + refused
					+ ", not 429.");
		}
		AtomicBoolean polling = new AtomicBoolean(polled);
		AtomicLong answers = new AtomicLong();
		Thread poller = new Thread(() -> {
			while (polling.get()) {
				try {
					app.send(HttpCall.get("/actuator/health"));
					answers.incrementAndGet();
				}
				catch (IllegalStateException ex) {
					// not answered: the next one
				}
			}
		}, "health-poller");
		try (RespClient admin = new RespClient("127.0.0.1", redis.port(), 2000)) {
			admin.command("FLUSHALL");
			poller.start();
			admin.command("CLIENT", "PAUSE", Integer.toString(PAUSE_MILLIS), "WRITE");
			long paused = System.nanoTime();
			app.status(HttpCall.get(PATH).header("X-Client", "late-" + row));
			recorder.add(version, row, "late-call-ms", Clock.millisBetween(paused, System.nanoTime()));
			double first = -1;
			while (System.nanoTime() - paused < WATCH.toNanos()) {
				if (app.status(spent) == 200) {
					first = Clock.millisBetween(paused, System.nanoTime());
					break;
				}
				Pause.millis(20);
			}
			if (first >= 0) {
				recorder.add(version, row, "first-redis-decision-ms", first,
						polled ? Target.atLeast(1000) : Target.NONE);
			}
			else {
				recorder.text(version, row, "first-redis-decision-ms", "> " + WATCH.toMillis());
			}
		}
		finally {
			polling.set(false);
			if (polled) {
				try {
					poller.join(5000);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}
		if (polled) {
			recorder.add(version, row, "health-answers", answers.get());
		}
	}

	private void cluster(Version version, Processes processes, Recorder recorder) {
		String row = "f7.sample.cluster-master-killed";
		RedisCluster cluster = processes.own(RedisCluster.start("--cluster-require-full-coverage", "no"));
		cluster.nodes().forEach(processes::recorded);
		List<RedisServer> masters = cluster.nodes();
		try (cluster;
				IntegrationApp app = version.sample("cluster")
					.properties("spring.profiles.active", "redis", "spring.data.redis.host", "127.0.0.1",
							"spring.data.redis.port", Integer.toString(masters.get(1).port()),
							"spring.data.redis.cluster.nodes", String.join(",", cluster.nodeAddresses()),
							"ratelimit.on-backend-failure", "allow", "ratelimit.redis.timeout", "250ms",
							"ratelimit.policies.per-master.key", "header:X-Client",
							"ratelimit.policies.per-master.limits[0].rate", "3/1h", "ratelimit.filters[0].patterns",
							"/api/reverse", "ratelimit.filters[0].policies", "per-master")
					.start(processes)) {
			if (!app.started()) {
				throw new IllegalStateException(app + " did not start: " + app.failureDescription());
			}
			List<MasterKilled> outcomes = new ArrayList<>();
			List<String> kills = new ArrayList<>();
			for (int killed = 0; killed < masters.size(); killed++) {
				MasterKilled outcome = killMaster(processes, app, cluster, killed);
				outcomes.add(outcome);
				kills.add("master " + killed + " killed (" + outcome.clientsOnKilled() + " of " + CLUSTER_CLIENTS
						+ " clients on it): the other masters' clients " + outcome.admittedOthers() + " admitted of "
						+ outcome.requestsOthers() + ", " + outcome.redisDecisionsOthers()
						+ " script calls on those masters; its own clients " + outcome.admittedKilled()
						+ " admitted of " + outcome.requestsKilled());
			}
			long requestsKilled = sum(outcomes, MasterKilled::requestsKilled);
			long requestsOthers = sum(outcomes, MasterKilled::requestsOthers);
			recorder.add(version, row, "requests-other-masters", requestsOthers);
			recorder.add(version, row, "admitted-other-masters", sum(outcomes, MasterKilled::admittedOthers),
					Target.zero());
			recorder.add(version, row, "script-calls-other-masters", sum(outcomes, MasterKilled::redisDecisionsOthers),
					Target.atLeast(requestsOthers));
			recorder.add(version, row, "requests-killed-master", requestsKilled);
			recorder.add(version, row, "admitted-killed-master", sum(outcomes, MasterKilled::admittedKilled),
					Target.exactly(requestsKilled));
			recorder.note("`" + row + "` " + version.label() + ": " + String.join("; ", kills) + ".");
		}
	}

	private static long sum(List<MasterKilled> outcomes, ToLongFunction<MasterKilled> measure) {
		return outcomes.stream().mapToLong(measure).sum();
	}

	/**
	 * Spends the permits of fresh clients, kills one master, has every client call again,
	 * then starts the master again (empty) and waits for the cluster to be whole.
	 */
	private MasterKilled killMaster(Processes processes, IntegrationApp app, RedisCluster cluster, int killed) {
		List<RedisServer> masters = cluster.nodes();
		List<Integer> masterOf = new ArrayList<>();
		for (int client = 0; client < CLUSTER_CLIENTS; client++) {
			long[] before = keysPerMaster(masters);
			HttpCall call = HttpCall.get(PATH).header("X-Client", "kill-" + killed + "-client-" + client);
			for (int i = 0; i < 4; i++) {
				app.status(call);
			}
			long[] after = keysPerMaster(masters);
			int master = -1;
			for (int m = 0; m < masters.size(); m++) {
				if (after[m] > before[m]) {
					master = m;
				}
			}
			masterOf.add(master);
		}
		masters.get(killed).stop();
		Pause.millis(1000);
		long scriptCalls = scriptCallsExcept(masters, killed);
		long[] admitted = new long[2];
		long[] requests = new long[2];
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		for (int round = 0; round < this.clusterRounds && System.nanoTime() < deadline; round++) {
			for (int client = 0; client < CLUSTER_CLIENTS; client++) {
				int status = app.status(HttpCall.get(PATH).header("X-Client", "kill-" + killed + "-client-" + client));
				int group = (masterOf.get(client) == killed) ? 1 : 0;
				requests[group]++;
				admitted[group] += (status == 200) ? 1 : 0;
			}
		}
		long redisDecisions = scriptCallsExcept(masters, killed) - scriptCalls;
		processes.restart(masters.get(killed));
		cluster.awaitReady(Duration.ofSeconds(30));
		// the limiter's probe brings the master back within a check interval or two
		Pause.millis(2000);
		long onKilled = masterOf.stream().filter((master) -> master == killed).count();
		return new MasterKilled(onKilled, admitted[0], requests[0], redisDecisions, admitted[1], requests[1]);
	}

	/**
	 * What the clients of each side got while a master was down.
	 *
	 * @param clientsOnKilled the clients whose keys live on the killed master
	 * @param admittedOthers the admitted requests of the other clients
	 * @param requestsOthers the requests of the other clients
	 * @param redisDecisionsOthers the decision script calls the other masters received
	 * meanwhile
	 * @param admittedKilled the admitted requests of the killed master's clients
	 * @param requestsKilled the requests of the killed master's clients
	 */
	private record MasterKilled(long clientsOnKilled, long admittedOthers, long requestsOthers,
			long redisDecisionsOthers, long admittedKilled, long requestsKilled) {
	}

	/** The decision script calls that the masters but one have received. */
	private static long scriptCallsExcept(List<RedisServer> masters, int except) {
		long calls = 0;
		for (int m = 0; m < masters.size(); m++) {
			if (m != except) {
				calls += RedisStats.scriptCalls(masters.get(m).port());
			}
		}
		return calls;
	}

	/** The policy's keys on each master, read with the harness's own client. */
	private static long[] keysPerMaster(List<RedisServer> masters) {
		long[] counts = new long[masters.size()];
		for (int m = 0; m < masters.size(); m++) {
			try (RespClient client = new RespClient("127.0.0.1", masters.get(m).port(), 2000)) {
				Object keys = client.command("KEYS", "*{per-master:*");
				counts[m] = (keys instanceof List<?> list) ? list.size() : 0;
			}
		}
		return counts;
	}

}
