package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.DoubleAccumulator;
import java.util.stream.IntStream;

import dev.ratelimit.core.redis.testing.LatencyProxy;
import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * A slow, a hung and a gone Redis, through the harness's latency proxy: replies delayed
 * by 0 to 1000 ms, then no replies at all (a black hole), then refused connections, each
 * for a phase under load. Every decision should end within {@code redis.timeout}, request
 * threads should not pile up, and while Redis fails at most one call per cool-down (1 s)
 * should wait for it (the others are decided locally and, while Redis answers late, sent
 * to it without waiting); once it is back, it should be used again within a cool-down.
 */
final class SlowRedis implements Scenario {

	private static final int CONNECTIONS = 32;

	private static final int PROBE_PER_SECOND = 50;

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	private static final Duration COOL_DOWN = Duration.ofSeconds(1);

	private static final List<Integer> LATENCIES = List.of(0, 50, 100, 200, 500, 1000);

	@Override
	public void run(Settings settings, Processes processes, Figures figures) {
		Duration phase = settings.seconds(3, 8);
		RedisServer redis = processes.redis();
		LatencyProxy proxy = processes.own(LatencyProxy.start(redis.endpoint()));
		SampleApp app = SampleApp.builder(settings.appJar(), "slow-redis")
			.failureMode("local")
			.timeout(TIMEOUT)
			.redis(proxy.port())
			.start(processes);
		Fleet fleet = Fleet.of(app);
		Load.warmUp(processes, "slow-redis", fleet, CONNECTIONS, settings.seconds(5, 15));
		double bucket = app.metrics().decisionBucketAtLeast(TIMEOUT.toNanos() / 1e9 * 1.1);
		figures.note("The app reaches Redis through a TCP proxy that delays replies, then answers nothing, then "
				+ "refuses connections, each for " + phase.toSeconds() + " s; `on-backend-failure: local`, "
				+ "`redis.timeout` 100ms, cool-down 1 s (the library's). Load: wrk with " + CONNECTIONS
				+ " connections on 10,000 clients, and the probe, " + PROBE_PER_SECOND + " requests/s.");
		figures.note("`p99-ms`, `max-ms`: the probe's requests in the phase, end to end. `decisions-over-timeout`: "
				+ "decisions slower than " + Figures.format(bucket * 1000) + " ms (the decision histogram's first "
				+ "bucket above `redis.timeout` + 10 %). `busy-threads-max`: Tomcat's busy request threads, sampled "
				+ "every 250 ms (target: no more than the clients' connections, " + CONNECTIONS + " + 16 for the "
				+ "probe). `waits-per-s`: calls that waited for Redis and timed out (`ratelimit.backend.failures`); "
				+ "while every answer is late, the calls already waiting when Redis turned slow (at most one per "
				+ "connection) and then at most one per cool-down, the others being decided locally at once. "
				+ "`script-calls-per-s`: decision script calls reaching Redis, which while Redis is late include the "
				+ "calls this instance allowed, sent without waiting so that Redis keeps counting them. "
				+ "`recovery-ms`: from Redis being reachable and fast again to its next script calls (5 calls after "
				+ "slow replies; 1 after the others).");
		Load load = Load.start(processes, "slow-redis", fleet, CONNECTIONS, phase.multipliedBy(12).plusSeconds(120),
				"slow-", 10_000, IntStream.range(0, 10).mapToObj((i) -> "probe-" + i).toList(), PROBE_PER_SECOND);
		Phases phases = new Phases(app, redis, figures, phase, bucket);
		for (int latency : LATENCIES) {
			proxy.latency(Duration.ofMillis(latency));
			// at the timeout itself some calls still make it: every call fails only
			// beyond it
			phases.measure((latency == 0) ? "latency-0" : "latency-" + latency + "ms", latency > TIMEOUT.toMillis());
		}
		proxy.latency(Duration.ZERO);
		phases.recovery("after-latency", 5);
		proxy.blackHole();
		phases.measure("black-hole", true);
		proxy.forward();
		phases.recovery("after-black-hole", 1);
		proxy.refuse();
		phases.measure("refused", true);
		proxy.forward();
		phases.recovery("after-refused", 1);
		Load.Result result = load.stop();
		phases.record(result);
		fleet.close();
	}

	/**
	 * The phases of the scenario, each measured while it runs; the probe's latencies are
	 * recorded once the load has stopped.
	 */
	private static final class Phases {

		private final SampleApp app;

		private final RedisServer redis;

		private final Figures figures;

		private final Duration length;

		private final double bucket;

		private final Map<String, Window> windows = new LinkedHashMap<>();

		Phases(SampleApp app, RedisServer redis, Figures figures, Duration length, double bucket) {
			this.app = app;
			this.redis = redis;
			this.figures = figures;
			this.length = length;
			this.bucket = bucket;
		}

		void measure(String row, boolean failing) {
			AppMetrics before = this.app.metrics();
			long calls = RedisStats.scriptCalls(this.redis.port());
			long started = System.nanoTime();
			DoubleAccumulator busy = new DoubleAccumulator(Math::max, 0);
			DoubleAccumulator live = new DoubleAccumulator(Math::max, 0);
			AtomicBoolean sampling = new AtomicBoolean(true);
			Thread sampler = new Thread(() -> {
				while (sampling.get()) {
					AppMetrics now = this.app.metrics();
					busy.accumulate(now.busyRequestThreads());
					live.accumulate(now.liveThreads());
					Pause.millis(250);
				}
			}, "thread-sampler");
			sampler.setDaemon(true);
			sampler.start();
			Pause.of(this.length);
			sampling.set(false);
			long ended = System.nanoTime();
			AppMetrics after = this.app.metrics();
			double seconds = (ended - started) / 1e9;
			this.windows.put(row, new Window(started, ended));
			this.figures.add(row, "decisions-over-timeout",
					after.decisionsAbove(this.bucket) - before.decisionsAbove(this.bucket), Target.zero());
			this.figures.add(row, "busy-threads-max", busy.get(), Target.atMost(CONNECTIONS + 16));
			this.figures.add(row, "live-threads-max", live.get());
			this.figures.add(row, "decisions-per-s", (after.decisions() - before.decisions()) / seconds);
			double waits = after.backendFailures() - before.backendFailures();
			this.figures.add(row, "backend-failures", waits);
			// the calls already waiting when Redis turned slow time out together, then
			// one per cool-down
			this.figures.add(row, "waits-per-s", waits / seconds, failing
					? Target.atMost((seconds / COOL_DOWN.toSeconds() + 1 + CONNECTIONS + 16) / seconds) : Target.NONE);
			if (!row.equals("black-hole") && !row.equals("refused")) {
				// in those phases no call reaches Redis at all
				this.figures.add(row, "script-calls-per-s",
						(RedisStats.scriptCalls(this.redis.port()) - calls) / seconds);
			}
		}

		void recovery(String row, long calls) {
			long back = System.nanoTime();
			long baseline = RedisStats.scriptCalls(this.redis.port());
			Duration limit = Duration.ofSeconds(30);
			OptionalLong used = RedisStats.awaitScriptCalls(this.redis.port(), baseline, calls, limit);
			this.figures.addWait(
					row, "recovery-ms", used.isPresent()
							? OptionalDouble.of(Clock.millisBetween(back, used.getAsLong())) : OptionalDouble.empty(),
					limit, Target.atMost(COOL_DOWN.toMillis() + 100));
		}

		void record(Load.Result result) {
			Target latency = Target.atMost(TIMEOUT.toMillis() + 50);
			this.windows.forEach((row, window) -> {
				Percentiles latencies = result.latencies(List.of(window));
				this.figures.add(row, "p99-ms", latencies.at(99), latency);
				this.figures.add(row, "max-ms", latencies.max());
			});
			this.figures.add("all", "unplanned-5xx", result.unplanned5xx(), Target.zero());
			this.figures.add("all", "socket-errors", result.socketErrors());
		}

	}

}
