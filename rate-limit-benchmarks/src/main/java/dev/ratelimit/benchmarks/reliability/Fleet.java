package dev.ratelimit.benchmarks.reliability;

import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The instances of the sample app a scenario runs against, which share one Redis: their
 * metrics taken together, and their access logs read together once they have stopped.
 */
final class Fleet implements AutoCloseable {

	private final List<SampleApp> apps;

	Fleet(List<SampleApp> apps) {
		this.apps = List.copyOf(apps);
	}

	static Fleet of(SampleApp... apps) {
		return new Fleet(List.of(apps));
	}

	List<SampleApp> apps() {
		return this.apps;
	}

	/** One scrape of every instance. */
	Snapshot metrics() {
		return new Snapshot(this.apps.stream().map(SampleApp::metrics).toList());
	}

	/**
	 * Stops every instance (gracefully: Tomcat flushes its access log) and reads their
	 * access logs.
	 */
	AccessLog stopAndReadAccessLogs() {
		close();
		return AccessLog.read(this.apps.stream().map(SampleApp::accessLog).toList());
	}

	@Override
	public void close() {
		this.apps.forEach(SampleApp::close);
	}

	/**
	 * The scrapes of every instance at one time.
	 *
	 * @param scrapes one per instance
	 */
	record Snapshot(List<AppMetrics> scrapes) {

		double sum(ToDoubleFunction<AppMetrics> reading) {
			return this.scrapes.stream().mapToDouble(reading).sum();
		}

		/**
		 * The change of a reading, summed over the instances, from an earlier snapshot to
		 * this one.
		 */
		double since(Snapshot earlier, ToDoubleFunction<AppMetrics> reading) {
			return sum(reading) - earlier.sum(reading);
		}

	}

}
