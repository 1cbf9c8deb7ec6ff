package dev.ratelimit.benchmarks.reliability;

import java.util.List;
import java.util.stream.IntStream;

import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * Redis Cluster master failover under load: three masters, three replicas, the first
 * master killed. The app should use the promoted replica within seconds and admit no
 * client beyond its bound.
 */
final class ClusterFailover implements Scenario {

	/**
	 * Lettuce learns of a promotion only from a topology refresh, which Spring Boot
	 * leaves off: the campaign turns on adaptive refresh, as anyone running a cluster
	 * would.
	 */
	static final String ADAPTIVE_REFRESH = "spring.data.redis.lettuce.cluster.refresh.adaptive";

	@Override
	public void run(Settings settings, Processes processes, Figures figures) {
		RedisCluster cluster = processes.own(RedisCluster.startWithReplicas());
		cluster.nodes().forEach(processes::recorded);
		cluster.replicas().forEach(processes::recorded);
		RedisServer replica = cluster.replicas().get(0);
		figures.note("3 masters, 3 replicas, cluster-node-timeout 1000 ms; `on-backend-failure: local`, "
				+ "`redis.timeout` 100ms, `" + ADAPTIVE_REFRESH + "=true` (Spring Boot's default has no topology "
				+ "refresh, so Lettuce would not learn of the promotion by itself). Load: wrk with "
				+ Failover.CONNECTIONS + " connections on 10,000 clients, and the probe, " + Failover.PROBE_PER_SECOND
				+ " requests/s over "
				+ "30 clients (about a third of them on the killed master's slots). The first master is killed "
				+ "(SIGKILL) after a steady phase.");
		figures.note("`recovery-ms`: from the kill to the first decision script call the promoted replica receives. "
				+ "Lettuce refreshes the topology adaptively at most once per 30 s (its default, which Spring Boot "
				+ "does not expose): a refresh set off by the kill, before the promotion, delays the next one. "
				+ "Bound per client: capacity + rate × t from Redis, plus the same from the local fallback.");
		SampleApp app = SampleApp.builder(settings.appJar(), "cluster")
			.failureMode("local")
			.redis(cluster.nodes().get(1))
			.cluster(cluster.nodeAddresses())
			.property(ADAPTIVE_REFRESH, "true")
			.start(processes);
		Load.warmUp(processes, "cluster", Fleet.of(app), Failover.CONNECTIONS, settings.seconds(5, 15));
		List<String> probeClients = IntStream.range(0, 30).mapToObj((i) -> "probe-" + i).toList();
		Failover.Outcome outcome = Failover.run(settings, processes, "cluster", app, probeClients, replica.port(),
				() -> cluster.killMaster(0, Failover.LIMIT));
		outcome.record(figures, "local", 1);
	}

}
