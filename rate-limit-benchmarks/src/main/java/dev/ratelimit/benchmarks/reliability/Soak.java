package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import dev.ratelimit.core.redis.testing.LatencyProxy;
import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * Load for minutes with a Redis fault at a fixed interval, in turn: killed and restarted,
 * slow, hung, refusing. At the end, with the load stopped, the instance should hold what
 * it held at the start: heap after a full collection (within 10 %), threads, sockets,
 * Redis connections, and no concurrency permit still taken.
 */
final class Soak implements Scenario {

	private static final int CONNECTIONS = 32;

	private static final int PROBE_PER_SECOND = 20;

	/**
	 * A concurrency limit on every request, high enough never to reject: its permits show
	 * leaks.
	 */
	private static final int IN_FLIGHT_MAX = 10_000;

	private static final Pattern REMAINING = Pattern.compile("\"remaining\":(-?\\d+)");

	private static final List<String> FAULTS = List.of("restart", "slow", "black-hole", "refused");

	@Override
	public void run(Settings settings, Processes processes, Figures figures) {
		Duration length = settings.seconds(60, 600);
		Duration interval = settings.seconds(15, 60);
		RedisServer redis = processes.redis();
		LatencyProxy proxy = processes.own(LatencyProxy.start(redis.endpoint()));
		SampleApp app = SampleApp.builder(settings.appJar(), "soak")
			.failureMode("local")
			.redis(proxy.port())
			.property("ratelimit.policies.inflight.key", "global")
			.property("ratelimit.policies.inflight.limits[0].algorithm", "concurrency")
			.property("ratelimit.policies.inflight.limits[0].max", Integer.toString(IN_FLIGHT_MAX))
			.property("ratelimit.filters[0].policies", "api,inflight")
			.start(processes);
		Fleet fleet = Fleet.of(app);
		figures.note(length.toSeconds() + " s of load (wrk with " + CONNECTIONS + " connections on 10,000 clients, "
				+ "the probe at " + PROBE_PER_SECOND + " requests/s), a Redis fault every " + interval.toSeconds()
				+ " s in turn: killed and restarted after 2 s; replies 500 ms late for 5 s; a black hole for 5 s; "
				+ "connections refused for 3 s (through the latency proxy). `on-backend-failure: local`, "
				+ "`redis.timeout` 100ms; every request also takes a permit of a global concurrency limit of "
				+ IN_FLIGHT_MAX + ".");
		figures.note("Readings at the start (after a warm-up) and at the end, each with the load stopped for 3 s and "
				+ "Redis answering: heap used after `jcmd GC.run`; live threads other than Tomcat's request threads "
				+ "(a pool that grows under load and shrinks after a minute idle, shown apart); the app's connections "
				+ "to Redis and all its sockets (`/proc`); Redis's client connections; `leaked-permits`: the "
				+ "concurrency limit's permits still taken at the end "
				+ "(its limit minus its remaining permits, from the `ratelimits` endpoint).");
		Load.warmUp(processes, "soak", fleet, CONNECTIONS, settings.seconds(10, 30));
		Readings start = readings(processes, app, redis, proxy);
		Fleet.Snapshot before = fleet.metrics();
		Load load = Load.start(processes, "soak", fleet, CONNECTIONS, length.plusSeconds(60), "soak-", 10_000,
				IntStream.range(0, 10).mapToObj((i) -> "probe-" + i).toList(), PROBE_PER_SECOND);
		long started = System.nanoTime();
		long end = started + length.toNanos();
		int faults = 0;
		for (long next = started + interval.toNanos() / 2; next < end
				- Duration.ofSeconds(8).toNanos(); next += interval.toNanos()) {
			Pause.until(next);
			String fault = FAULTS.get(faults++ % FAULTS.size());
			System.out.println("# soak: fault " + faults + ", " + fault);
			inject(fault, processes, redis, proxy);
		}
		Pause.until(end);
		Load.Result result = load.stop();
		Fleet.Snapshot after = fleet.metrics();
		Readings finish = readings(processes, app, redis, proxy);
		long leaked = IN_FLIGHT_MAX - remaining(app);
		fleet.close();

		String row = "local";
		figures.add(row, "heap-start-mb", start.heap / 1e6);
		figures.add(row, "heap-end-mb", finish.heap / 1e6);
		figures.add(row, "heap-growth-pct", 100.0 * (finish.heap - start.heap) / start.heap, Target.atMost(10));
		figures.add(row, "threads-start", start.threads);
		figures.add(row, "threads-end", finish.threads);
		// compiler and GC worker threads come and go by themselves: two more is not a
		// leak, one per fault would be
		figures.add(row, "thread-growth", finish.threads - start.threads, Target.atMost(2));
		figures.add(row, "request-threads-start", start.requestThreads);
		figures.add(row, "request-threads-end", finish.requestThreads);
		figures.add(row, "redis-connections-start", start.redisConnections);
		figures.add(row, "redis-connections-end", finish.redisConnections);
		figures.add(row, "redis-connection-growth", finish.redisConnections - start.redisConnections, Target.zero());
		figures.add(row, "sockets-start", start.sockets);
		figures.add(row, "sockets-end", finish.sockets);
		figures.add(row, "redis-clients-start", start.redisClients);
		figures.add(row, "redis-clients-end", finish.redisClients);
		figures.add(row, "redis-client-growth", finish.redisClients - start.redisClients, Target.zero());
		figures.add(row, "leaked-permits", leaked, Target.zero());
		figures.add(row, "unplanned-5xx", result.unplanned5xx(), Target.zero());
		figures.add(row, "socket-errors", result.socketErrors());
		figures.add(row, "faults", faults);
		figures.add(row, "backend-failures", after.since(before, AppMetrics::backendFailures));
		figures.add(row, "requests", result.requests());
	}

	private static void inject(String fault, Processes processes, RedisServer redis, LatencyProxy proxy) {
		switch (fault) {
			case "restart" -> {
				redis.stop();
				Pause.millis(2000);
				processes.restart(redis);
			}
			case "slow" -> {
				proxy.latency(Duration.ofMillis(500));
				Pause.millis(5000);
				proxy.latency(Duration.ZERO);
			}
			case "black-hole" -> {
				proxy.blackHole();
				Pause.millis(5000);
				proxy.forward();
			}
			default -> {
				proxy.refuse();
				Pause.millis(3000);
				proxy.forward();
			}
		}
	}

	/**
	 * Takes the readings once the load has stopped for 3 s and Redis takes decisions
	 * again (requests of a client of its own until a script call reaches Redis, for at
	 * most 60 s).
	 */
	private static Readings readings(Processes processes, SampleApp app, RedisServer redis, LatencyProxy proxy) {
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		long calls = RedisStats.scriptCalls(redis.port());
		while (System.nanoTime() < deadline && RedisStats.scriptCalls(redis.port()) == calls) {
			app.request("soak-check");
			Pause.millis(100);
		}
		Pause.millis(3000);
		long heap = JvmReadings.heapAfterGc(processes, app.pid());
		AppMetrics metrics = app.metrics();
		return new Readings(heap, metrics.liveThreads() - metrics.requestThreads(), metrics.requestThreads(),
				JvmReadings.connectionsTo(app.pid(), proxy.port()), JvmReadings.sockets(app.pid()),
				RedisStats.clients(redis.port()));
	}

	private static long remaining(SampleApp app) {
		String state = app.get("/actuator/ratelimits/inflight/any");
		Matcher matcher = REMAINING.matcher(state);
		if (!matcher.find()) {
			throw new IllegalStateException("No remaining permits in " + state);
		}
		return Long.parseLong(matcher.group(1));
	}

	/**
	 * The readings of one end of the soak.
	 *
	 * @param heap bytes in use after a full collection
	 * @param threads live threads other than Tomcat's request threads
	 * @param requestThreads Tomcat's request threads
	 * @param redisConnections the app's connections to Redis (through the proxy)
	 * @param sockets every socket the app holds open
	 * @param redisClients the connections Redis counts, the harness's own aside
	 */
	private record Readings(long heap, double threads, double requestThreads, long redisConnections, long sockets,
			int redisClients) {
	}

}
