package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * Redis killed (SIGKILL) and restarted, empty, several times under load, in each failure
 * mode. Recovery is measured outside the app: from the restarted Redis answering
 * {@code PING} to the first decision script call it receives ({@code INFO commandstats},
 * polled every 20 ms; the app's health endpoint, which runs the script itself, is left
 * alone).
 */
final class RedisRestarts implements Scenario {

	private static final List<String> MODES = List.of("allow", "deny", "local");

	private static final int CONNECTIONS = 32;

	private static final int PROBE_PER_SECOND = 50;

	@Override
	public void run(Settings settings, Processes processes, Figures figures) {
		int restarts = settings.pick(3, 10);
		Duration steady = settings.seconds(1, 3);
		Duration outage = settings.seconds(2, 3);
		Duration recoveryLimit = settings.seconds(15, 30);
		Duration timeout = Duration.ofMillis(100);
		figures.note("Per mode: " + restarts + " times, " + steady.toSeconds() + " s of load, Redis killed, "
				+ outage.toSeconds() + " s down, restarted empty; recovery awaited for at most "
				+ recoveryLimit.toSeconds() + " s. Load: wrk with " + CONNECTIONS + " connections per instance on "
				+ "10,000 clients, and the probe, " + PROBE_PER_SECOND + " requests/s over 10 clients of its own, "
				+ "timing each request. Local mode runs a fleet of two instances. `redis.timeout` 100ms.");
		figures.note("`outage-p99-ms` and `outage-max-ms`: the probe's requests due from the kill to the first "
				+ "script call after the restart. A recovery of 0 ms: the first call came before the harness saw the "
				+ "restarted Redis answer PING (it polls every 20 ms). Bound per client over the run: "
				+ "(1 + restarts) × capacity + rate × t "
				+ "from Redis (a restarted Redis has forgotten every bucket), plus capacity + rate × t per instance in "
				+ "local mode; in allow mode admissions beyond it are the mode's documented choice, not a miss.");
		Target latency = Target.atMost(timeout.toMillis() + 50);
		for (String mode : MODES) {
			RedisServer redis = processes.redis();
			int instances = mode.equals("local") ? 2 : 1;
			List<SampleApp> apps = new ArrayList<>();
			for (int i = 0; i < instances; i++) {
				apps.add(SampleApp.builder(settings.appJar(), "restarts-" + mode + "-" + i)
					.failureMode(mode)
					.timeout(timeout)
					.redis(redis)
					.start(processes));
			}
			Fleet fleet = new Fleet(apps);
			Load.warmUp(processes, "restarts-" + mode, fleet, CONNECTIONS, settings.seconds(5, 15));
			Fleet.Snapshot before = fleet.metrics();
			Duration longest = steady.plus(outage)
				.plus(recoveryLimit)
				.multipliedBy(restarts)
				.plus(steady)
				.plusSeconds(60);
			List<String> probeClients = IntStream.range(0, 10).mapToObj((i) -> "probe-" + i).toList();
			Load load = Load.start(processes, "restarts-" + mode, fleet, CONNECTIONS, longest, "r-", 10_000,
					probeClients, PROBE_PER_SECOND);
			List<Window> outages = new ArrayList<>();
			List<Double> recoveries = new ArrayList<>();
			boolean allRecovered = true;
			for (int r = 0; r < restarts; r++) {
				Pause.of(steady);
				long killed = System.nanoTime();
				redis.stop();
				Pause.of(outage);
				processes.restart(redis);
				long answering = System.nanoTime();
				OptionalLong called = RedisStats.awaitScriptCalls(redis.port(), 0, 1, recoveryLimit);
				long recovered = called.orElse(System.nanoTime());
				allRecovered &= called.isPresent();
				outages.add(new Window(killed, recovered));
				// whole ms: the polls are 20 ms apart; 0 when a call came before the
				// harness saw PONG
				recoveries.add((double) Math.round(Clock.millisBetween(answering, recovered)));
				System.out.println("# restarts " + mode + " " + (r + 1) + ": recovery "
						+ (called.isPresent() ? Figures.format(recoveries.get(r)) + " ms" : "not within the limit"));
			}
			Pause.of(steady);
			Load.Result result = load.stop();
			Fleet.Snapshot after = fleet.metrics();
			AccessLog log = fleet.stopAndReadAccessLogs();
			redis.close();

			figures.add(mode, "unplanned-5xx", result.unplanned5xx(), Target.zero());
			figures.add(mode, "socket-errors", result.socketErrors());
			Percentiles during = result.latencies(outages);
			figures.add(mode, "outage-p99-ms", during.at(99), latency);
			figures.add(mode, "outage-max-ms", during.max());
			Percentiles recovery = Percentiles.of(recoveries);
			figures.addWait(mode, "recovery-max-ms",
					allRecovered ? OptionalDouble.of(recovery.max()) : OptionalDouble.empty(), recoveryLimit,
					Target.atMost(1000));
			figures.add(mode, "recovery-median-ms", recovery.median());
			long bound = SampleApp.LIMIT.stated(result.elapsed().plusSeconds(1), restarts,
					mode.equals("local") ? instances : 0);
			var admitted = log.admitted((client) -> client.startsWith("r-") || client.startsWith("probe-"));
			figures.add(mode, "beyond-bound", TokenBucketBound.beyond(admitted, bound),
					mode.equals("allow") ? Target.NONE : Target.zero());
			figures.add(mode, "failed-open", after.since(before, AppMetrics::failedOpen));
			figures.add(mode, "failed-closed", after.since(before, AppMetrics::failedClosed));
			figures.add(mode, "backend-failures", after.since(before, AppMetrics::backendFailures));
			figures.add(mode, "requests", result.requests());
			figures.note(mode + ": recovery after each restart (ms): "
					+ recoveries.stream().map((ms) -> Figures.format(ms)).collect(Collectors.joining(", "))
					+ (allRecovered ? "" : " (a wait that ran out counts its limit)"));
		}
	}

}
