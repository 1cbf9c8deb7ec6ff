package dev.ratelimit.benchmarks.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * wrk at each connection count, on one hot client and on 10,000 clients, in each failure
 * mode, against a freshly started instance and against a warmed-up one, with Redis up
 * throughout. Whatever the load, no client should be admitted beyond its limit (in local
 * mode, beyond the limit from Redis plus the instance's own local limit).
 */
final class Saturation implements Scenario {

	static final int MANY_CLIENTS = 10_000;

	private static final List<String> MODES = List.of("allow", "deny", "local");

	@Override
	public void run(Settings settings, Processes processes, Figures figures) {
		List<Integer> connections = settings.pick(List.of(128, 512), List.of(16, 128, 256, 512));
		Duration length = settings.seconds(4, 10);
		Duration warmUp = settings.seconds(6, 30);
		figures.note("Each point: wrk for " + length.toSeconds() + " s (2 threads, `/api/reverse`), every client "
				+ "limited to 6/1m (a token bucket of capacity 6), `redis.timeout` 100ms, new clients for each point. "
				+ (settings.quick()
						? "A fresh instance is measured once per mode (512 connections, 10,000 clients, its first "
								+ "requests); the warm points follow a " + warmUp.toSeconds()
								+ " s warm-up of that instance."
						: "Each fresh point has an instance of its own, measured from its first request; the warm "
								+ "points share one instance per mode, after a " + warmUp.toSeconds() + " s warm-up."));
		figures.note("Bound per client: capacity + rate × (the point's length + 1 s); in local mode twice that "
				+ "(Redis, plus the instance's local limits while Redis calls fail). `beyond-bound` sums the 2xx "
				+ "beyond it over all clients (from Tomcat's access log). With 10,000 clients a point sends each "
				+ "client fewer requests than its bound (`most-requests-of-a-client`), so it cannot be exceeded: "
				+ "there `failed-open` shows the decisions Redis did not make. `failed-open` and `failed-closed` count the "
				+ "`api` policy's decisions with those outcomes, `backend-failures` the Redis calls that failed or "
				+ "timed out (`ratelimit.backend.failures`).");
		Grid grid = new Grid(settings, processes, length);
		for (String mode : MODES) {
			RedisServer redis = processes.redis();
			List<Point> points = new ArrayList<>();
			if (!settings.quick()) {
				for (int clients : List.of(1, MANY_CLIENTS)) {
					for (int c : connections) {
						try (SampleApp app = grid.start(mode, redis, "fresh")) {
							points.add(grid.measure(app, "fresh", clients, c));
						}
					}
				}
			}
			try (SampleApp app = grid.start(mode, redis, "warm")) {
				if (settings.quick()) {
					points.add(grid.measure(app, "fresh", MANY_CLIENTS, 512));
				}
				Load.warmUp(processes, "saturation-" + mode, Fleet.of(app), 128, warmUp);
				for (int clients : List.of(1, MANY_CLIENTS)) {
					for (int c : connections) {
						points.add(grid.measure(app, "warm", clients, c));
					}
				}
			}
			redis.close();
			// the instances have stopped: Tomcat has flushed their access logs
			points.forEach((point) -> point.record(figures));
		}
	}

	/**
	 * Starts instances and measures points, each with clients of its own.
	 */
	private static final class Grid {

		private final Settings settings;

		private final Processes processes;

		private final Duration length;

		private int points;

		Grid(Settings settings, Processes processes, Duration length) {
			this.settings = settings;
			this.processes = processes;
			this.length = length;
		}

		SampleApp start(String mode, RedisServer redis, String state) {
			return SampleApp.builder(this.settings.appJar(), mode + "-" + state + "-" + this.points)
				.failureMode(mode)
				.redis(redis)
				.start(this.processes);
		}

		Point measure(SampleApp app, String state, int clients, int connections) {
			int index = this.points++;
			String prefix = "s" + index + "-";
			String row = app.failureMode() + "." + state + "." + ((clients == 1) ? "hot-key" : clients + "-keys") + ".c"
					+ connections;
			AppMetrics before = app.metrics();
			long started = System.nanoTime();
			Wrk.Run run = Wrk.start(this.processes, "saturation-" + index, app.url(SampleApp.PATH), connections,
					this.length, prefix, clients);
			Wrk.Result result = run.await(Duration.ofSeconds(30));
			Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
			AppMetrics after = app.metrics();
			System.out
				.println("# saturation " + row + ": " + Figures.format(result.requestsPerSecond()) + " requests/s");
			return new Point(row, prefix, app.failureMode(), elapsed, result, before, after, app.accessLog());
		}

	}

	/**
	 * One point of the grid, measured; its access log is read once its instance has
	 * stopped.
	 */
	private record Point(String row, String prefix, String mode, Duration elapsed, Wrk.Result result, AppMetrics before,
			AppMetrics after, Path accessLog) {

		void record(Figures figures) {
			AccessLog log = AccessLog.read(this.accessLog);
			Map<String, Long> admitted = log.admitted((client) -> client.startsWith(this.prefix));
			long bound = SampleApp.LIMIT.stated(this.elapsed.plusSeconds(1), 0, this.mode.equals("local") ? 1 : 0);
			figures.add(this.row, "beyond-bound", TokenBucketBound.beyond(admitted, bound), Target.zero());
			figures.add(this.row, "clients-beyond", TokenBucketBound.clientsBeyond(admitted, bound));
			figures.add(this.row, "bound", bound);
			figures.add(this.row, "most-requests-of-a-client",
					log.mostRequests((client) -> client.startsWith(this.prefix)));
			figures.add(this.row, "failed-open", delta(AppMetrics::failedOpen));
			figures.add(this.row, "failed-closed", delta(AppMetrics::failedClosed));
			figures.add(this.row, "backend-failures", delta(AppMetrics::backendFailures));
			figures.add(this.row, "requests-per-s", this.result.requestsPerSecond());
			figures.add(this.row, "p99-ms", this.result.p99Millis());
			figures.add(this.row, "unplanned-5xx", this.result.unplanned5xx(), Target.zero());
			figures.add(this.row, "socket-errors", this.result.socketErrors());
		}

		private double delta(ToDoubleFunction<AppMetrics> reading) {
			return reading.applyAsDouble(this.after) - reading.applyAsDouble(this.before);
		}

	}

}
