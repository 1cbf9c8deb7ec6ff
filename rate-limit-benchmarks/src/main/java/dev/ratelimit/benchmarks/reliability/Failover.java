package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * A master killed under load, and the failover that follows, for the Sentinel and the
 * Cluster scenarios: load on one instance, the master killed, its replica promoted by the
 * harness's topology, and recovery measured as the time from the kill to the first
 * decision script call the promoted replica receives.
 */
final class Failover {

	static final int CONNECTIONS = 32;

	static final int PROBE_PER_SECOND = 50;

	/** The longest wait for the promotion, and for the first script call after it. */
	static final Duration LIMIT = Duration.ofSeconds(30);

	private Failover() {
	}

	/**
	 * Runs load on the instance, kills the master after a steady phase and keeps the load
	 * on for another one.
	 * @param promotedPort the port of the replica that will be promoted
	 * @param killMaster kills the master and returns once the replica is promoted
	 */
	static Outcome run(Settings settings, Processes processes, String name, SampleApp app, List<String> probeClients,
			int promotedPort, Runnable killMaster) {
		Fleet fleet = Fleet.of(app);
		Duration steady = settings.seconds(3, 5);
		Fleet.Snapshot before = fleet.metrics();
		Load load = Load.start(processes, name, fleet, CONNECTIONS, steady.multipliedBy(2).plus(LIMIT).plus(LIMIT),
				"f-", 10_000, probeClients, PROBE_PER_SECOND);
		Pause.of(steady);
		long baseline = RedisStats.scriptCalls(promotedPort);
		CompletableFuture<OptionalLong> firstCall = CompletableFuture
			.supplyAsync(() -> RedisStats.awaitScriptCalls(promotedPort, baseline, 1, LIMIT.plus(LIMIT)));
		long killed = System.nanoTime();
		killMaster.run();
		long promoted = System.nanoTime();
		OptionalLong recovered = firstCall.join();
		Pause.of(steady);
		Load.Result result = load.stop();
		Fleet.Snapshot after = fleet.metrics();
		AccessLog log = fleet.stopAndReadAccessLogs();
		return new Outcome(result, before, after, killed, promoted, recovered, log);
	}

	/**
	 * What a failover run measured.
	 *
	 * @param load the load's results
	 * @param before the metrics before the load
	 * @param after the metrics after it
	 * @param killedNanos when the master was killed
	 * @param promotedNanos when the harness saw the replica promoted
	 * @param recoveredNanos when the promoted replica received its first script call, if
	 * it did
	 * @param accessLog the instance's access log
	 */
	record Outcome(Load.Result load, Fleet.Snapshot before, Fleet.Snapshot after, long killedNanos, long promotedNanos,
			OptionalLong recoveredNanos, AccessLog accessLog) {

		/**
		 * From the kill to the first script call after it (or the end of the run, if none
		 * came).
		 */
		Window outage() {
			return new Window(this.killedNanos, this.recoveredNanos.orElse(this.load.stoppedNanos()));
		}

		/**
		 * Records the figures both failover scenarios have.
		 * @param localInstances 1 when the instance decides with local limits while Redis
		 * fails, else 0
		 */
		void record(Figures figures, String row, int localInstances) {
			figures.addWait(row, "recovery-ms",
					this.recoveredNanos.isPresent()
							? OptionalDouble.of(Clock.millisBetween(this.killedNanos, this.recoveredNanos.getAsLong()))
							: OptionalDouble.empty(),
					LIMIT.plus(LIMIT), Target.atMost(5000));
			figures.add(row, "promotion-ms", Clock.millisBetween(this.killedNanos, this.promotedNanos));
			figures.add(row, "unplanned-5xx", this.load.unplanned5xx(), Target.zero());
			figures.add(row, "socket-errors", this.load.socketErrors());
			Percentiles during = this.load.latencies(List.of(outage()));
			figures.add(row, "outage-p99-ms", during.at(99));
			figures.add(row, "outage-max-ms", during.max());
			Map<String, Long> admitted = this.accessLog.admitted((client) -> !client.startsWith("warm-up-"),
					Clock.epochMillis(this.load.startedNanos()), Long.MAX_VALUE);
			long bound = SampleApp.LIMIT.stated(this.load.elapsed().plusSeconds(1), 0, localInstances);
			figures.add(row, "beyond-bound", TokenBucketBound.beyond(admitted, bound), Target.zero());
			figures.add(row, "failed-open", this.after.since(this.before, AppMetrics::failedOpen));
			figures.add(row, "failed-closed", this.after.since(this.before, AppMetrics::failedClosed));
			figures.add(row, "backend-failures", this.after.since(this.before, AppMetrics::backendFailures));
			figures.add(row, "requests", this.load.requests());
		}

	}

}
