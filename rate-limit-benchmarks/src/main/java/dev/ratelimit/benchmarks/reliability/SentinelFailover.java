package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.redis.testing.RedisSentinel;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;

/**
 * Sentinel failover under load: one master, one replica, three sentinels; the master
 * killed. The app should use the promoted replica within seconds, and a client it had
 * exhausted before should stay refused: its state moved with the replica.
 */
final class SentinelFailover implements Scenario {

	static final String EXHAUSTED = "exhausted";

	private static final String ROW = "deny";

	private static final Pattern OFFSET = Pattern.compile("(?:master_repl_offset|slave_repl_offset):(\\d+)");

	@Override
	public void run(Settings settings, Processes processes, Figures figures) {
		RedisSentinel sentinel = processes.own(RedisSentinel.start());
		sentinel.sentinels().forEach(processes::recorded);
		RedisServer master = processes.recorded(sentinel.master());
		RedisServer replica = processes.recorded(sentinel.replica());
		figures.note("1 master, 1 replica, 3 sentinels (quorum 2, down-after-milliseconds 1000, failover-timeout "
				+ "2000); the app finds the master through the sentinels, `on-backend-failure: deny` (so that every 2xx "
				+ "is Redis's decision), `redis.timeout` 100ms. Load: wrk with " + Failover.CONNECTIONS
				+ " connections on 10,000 clients, and the probe, " + Failover.PROBE_PER_SECOND
				+ " requests/s over 10 clients, one of them exhausted before the load "
				+ "starts (a tenth of the probe's requests). The master is killed (SIGKILL) after a steady phase.");
		figures.note("`recovery-ms`: from the kill to the first decision script call the promoted replica receives "
				+ "(`INFO commandstats`, polled every 20 ms). `exhausted-beyond-refill`: the exhausted client's 2xx, "
				+ "from its exhaustion to the end, beyond what its bucket refilled meanwhile (a replica without its "
				+ "state would admit it in full again).");
		SampleApp app = SampleApp.builder(settings.appJar(), "sentinel")
			.failureMode("deny")
			.redis(master)
			.sentinel(RedisSentinel.MASTER_NAME, sentinel.sentinelNodes())
			.start(processes);
		Load.warmUp(processes, "sentinel", Fleet.of(app), Failover.CONNECTIONS, settings.seconds(5, 15));
		long exhausted = exhaust(app, figures);
		awaitReplication(master, replica);
		List<String> probeClients = new ArrayList<>(List.of(EXHAUSTED));
		for (int i = 0; i < 9; i++) {
			probeClients.add("probe-" + i);
		}
		Failover.Outcome outcome = Failover.run(settings, processes, "sentinel", app, probeClients, replica.port(),
				() -> sentinel.killMaster(Failover.LIMIT));
		outcome.record(figures, ROW, 0);
		long from = Clock.epochMillis(exhausted);
		long to = Clock.epochMillis(outcome.load().stoppedNanos()) + 1000;
		long admitted = outcome.accessLog().admitted(EXHAUSTED, from, to);
		long refill = SampleApp.LIMIT.refill(Duration.ofMillis(to - from));
		figures.add(ROW, "exhausted-admitted", admitted);
		figures.add(ROW, "exhausted-refill", refill);
		figures.add(ROW, "exhausted-beyond-refill", Math.max(0, admitted - refill), Target.zero());
	}

	/**
	 * Sends the exhausted client's requests one by one until Redis refuses one; returns
	 * when. Under {@code deny} a 503 is the instance still cooling down from answers the
	 * warm-up's load made late (a busy instance reads them late): it is neither an
	 * admission nor a refusal by Redis, so the client asks again a little later.
	 */
	private static long exhaust(SampleApp app, Figures figures) {
		AppMetrics before = app.metrics();
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		int admitted = 0;
		int unavailable = 0;
		while (admitted < 50 && System.nanoTime() < deadline) {
			int status = app.request(EXHAUSTED);
			if (status == 429) {
				long at = System.nanoTime();
				double failures = app.metrics().backendFailures() - before.backendFailures();
				if (failures > 0) {
					figures.note("While the client was exhausted, " + Figures.format(failures) + " Redis calls "
							+ "failed or were late.");
				}
				if (unavailable > 0) {
					figures.note("Exhausting the client took " + unavailable + " answers of 503 first: the instance "
							+ "was still in the cool-down of late answers after the warm-up's load.");
				}
				return at;
			}
			if (status == 503) {
				unavailable++;
				Pause.millis(50);
			}
			else {
				admitted++;
			}
		}
		throw new IllegalStateException("The client was not refused with 429 within 20 s (" + admitted
				+ " requests allowed, " + unavailable + " answered 503); is the limit 6/1m?");
	}

	/**
	 * Waits until the replica has every write the master has made so far, for at most 10
	 * s: the campaign measures failover, not replication lag.
	 */
	private static void awaitReplication(RedisServer master, RedisServer replica) {
		long target = offset(master);
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (offset(replica) < target && System.nanoTime() < deadline) {
			Pause.millis(50);
		}
	}

	private static long offset(RedisServer server) {
		try (RespClient client = server.endpoint().client()) {
			Matcher matcher = OFFSET.matcher(client.text("INFO", "replication"));
			long offset = 0;
			while (matcher.find()) {
				offset = Math.max(offset, Long.parseLong(matcher.group(1)));
			}
			return offset;
		}
	}

}
