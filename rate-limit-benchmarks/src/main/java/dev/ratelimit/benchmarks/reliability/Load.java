package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Load on a fleet for a scenario's phases: wrk on each instance, many clients in
 * rotation, and the probe on a few clients of its own, which times every request. Stopped
 * when the phases are over.
 */
final class Load {

	private final List<Wrk.Run> runs;

	private final Probe probe;

	private final long startedNanos;

	private Load(List<Wrk.Run> runs, Probe probe, long startedNanos) {
		this.runs = runs;
		this.probe = probe;
		this.startedNanos = startedNanos;
	}

	/**
	 * Starts the load.
	 * @param longest the longest the phases can take (wrk needs a length; it is stopped
	 * at the end)
	 * @param prefix the prefix of wrk's clients
	 * @param clients how many clients wrk's requests rotate over
	 * @param probeClients the probe's clients
	 * @param probePerSecond the probe's requests per second, over all instances
	 */
	static Load start(Processes processes, String name, Fleet fleet, int connections, Duration longest, String prefix,
			int clients, List<String> probeClients, int probePerSecond) {
		long started = System.nanoTime();
		List<Wrk.Run> runs = new ArrayList<>();
		for (SampleApp app : fleet.apps()) {
			runs.add(Wrk.start(processes, name + "-" + app.name(), app.url(SampleApp.PATH), connections, longest,
					prefix, clients));
		}
		Probe probe = processes.own(Probe.start(fleet.apps(), probeClients, probePerSecond, Duration.ofSeconds(5)));
		return new Load(runs, probe, started);
	}

	/**
	 * Warms the fleet up: wrk on each instance, on clients of their own, for a while.
	 */
	static void warmUp(Processes processes, String name, Fleet fleet, int connections, Duration duration) {
		List<Wrk.Run> runs = new ArrayList<>();
		for (SampleApp app : fleet.apps()) {
			runs.add(Wrk.start(processes, name + "-warm-up-" + app.name(), app.url(SampleApp.PATH), connections,
					duration, "warm-up-", 10_000));
		}
		runs.forEach((run) -> run.await(Duration.ofSeconds(30)));
	}

	/**
	 * Stops wrk and the probe and returns what they measured.
	 */
	Result stop() {
		List<Probe.Sample> samples = this.probe.stop();
		List<Wrk.Result> results = this.runs.stream().map(Wrk.Run::stop).toList();
		return new Result(results, samples, this.startedNanos, System.nanoTime());
	}

	/**
	 * What a load measured.
	 *
	 * @param wrk one result per instance
	 * @param samples the probe's requests
	 * @param startedNanos when it started
	 * @param stoppedNanos when it stopped
	 */
	record Result(List<Wrk.Result> wrk, List<Probe.Sample> samples, long startedNanos, long stoppedNanos) {

		Duration elapsed() {
			return Duration.ofNanos(this.stoppedNanos - this.startedNanos);
		}

		long requests() {
			return this.wrk.stream().mapToLong(Wrk.Result::requests).sum() + this.samples.size();
		}

		long unplanned5xx() {
			return this.wrk.stream().mapToLong(Wrk.Result::unplanned5xx).sum()
					+ this.samples.stream().filter(Probe.Sample::unplanned5xx).count();
		}

		long socketErrors() {
			return this.wrk.stream().mapToLong(Wrk.Result::socketErrors).sum()
					+ this.samples.stream().filter(Probe.Sample::socketError).count();
		}

		/** The latencies (ms) of the probe's requests sent within the windows. */
		Percentiles latencies(List<Window> windows) {
			return Percentiles.of(this.samples.stream()
				.filter((sample) -> Window.anyContains(windows, sample.startedNanos()))
				.map(Probe.Sample::latencyMillis)
				.toList());
		}

	}

}
