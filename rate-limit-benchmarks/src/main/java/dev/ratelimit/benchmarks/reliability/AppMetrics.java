package dev.ratelimit.benchmarks.reliability;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One scrape of the sample app's {@code /actuator/prometheus}: the rate limiter's meters
 * ({@code ratelimit.requests}, {@code ratelimit.backend.failures},
 * {@code ratelimit.decision}) and the JVM's and Tomcat's thread gauges. The campaign
 * takes differences of two scrapes around a phase.
 */
final class AppMetrics {

	static final String REQUESTS = "ratelimit_requests_total";

	static final String FAILURES = "ratelimit_backend_failures_total";

	static final String DECISIONS = "ratelimit_decision_seconds";

	private final List<Sample> samples;

	private AppMetrics(List<Sample> samples) {
		this.samples = samples;
	}

	static AppMetrics parse(String text) {
		List<Sample> samples = new ArrayList<>();
		for (String line : text.split("\n")) {
			Sample sample = Sample.parse(line.strip());
			if (sample != null) {
				samples.add(sample);
			}
		}
		return new AppMetrics(samples);
	}

	/**
	 * Returns the sum of a metric's series whose tags include the given ones (a tag given
	 * as {@code !value} must differ from it).
	 */
	double sum(String name, Map<String, String> tags) {
		double sum = 0;
		for (Sample sample : this.samples) {
			if (sample.name.equals(name) && sample.matches(tags)) {
				sum += sample.value;
			}
		}
		return sum;
	}

	double sum(String name) {
		return sum(name, Map.of());
	}

	/**
	 * The {@code api} policy's decisions of one outcome: allowed, rejected, failed-open,
	 * failed-closed.
	 */
	double outcome(String outcome) {
		return sum(REQUESTS, Map.of("policy", "api", "outcome", outcome));
	}

	double failedOpen() {
		return outcome("failed-open");
	}

	double failedClosed() {
		return outcome("failed-closed");
	}

	/** Decisions of the {@code api} policy, whatever their outcome. */
	double decisions() {
		return sum(REQUESTS, Map.of("policy", "api"));
	}

	double liveThreads() {
		return sum("jvm_threads_live_threads");
	}

	double busyRequestThreads() {
		return sum("tomcat_threads_busy_threads");
	}

	/**
	 * Tomcat's request threads, busy or idle: a pool that grows under load and shrinks
	 * after a minute idle.
	 */
	double requestThreads() {
		return sum("tomcat_threads_current_threads");
	}

	/** Redis calls that failed or timed out. */
	double backendFailures() {
		return sum(FAILURES, Map.of("exception", "!none"));
	}

	/**
	 * Returns the upper bound of the decision histogram's first bucket at or above the
	 * given time: decisions slower than it are {@link #decisionsAbove(double)}.
	 */
	double decisionBucketAtLeast(double seconds) {
		double best = Double.POSITIVE_INFINITY;
		for (Sample sample : this.samples) {
			if (sample.name.equals(DECISIONS + "_bucket")) {
				double le = parseLe(sample.tags.get("le"));
				if (le >= seconds && le < best) {
					best = le;
				}
			}
		}
		return best;
	}

	/**
	 * Returns the decisions so far that took longer than a bucket bound of the histogram.
	 */
	double decisionsAbove(double bucket) {
		double within = 0;
		for (Sample sample : this.samples) {
			if (sample.name.equals(DECISIONS + "_bucket") && parseLe(sample.tags.get("le")) == bucket) {
				within += sample.value;
			}
		}
		return sum(DECISIONS + "_count") - within;
	}

	private static double parseLe(@Nullable String le) {
		return (le == null || le.equals("+Inf")) ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
	}

	/**
	 * One line of the exposition format: {@code name{tag="value",...} value}.
	 */
	private record Sample(String name, Map<String, String> tags, double value) {

		static @Nullable Sample parse(String line) {
			if (line.isEmpty() || line.startsWith("#")) {
				return null;
			}
			int brace = line.indexOf('{');
			int space = line.lastIndexOf(' ');
			if (space < 0) {
				return null;
			}
			Map<String, String> tags = new LinkedHashMap<>();
			String name;
			if (brace >= 0 && brace < space) {
				name = line.substring(0, brace);
				String body = line.substring(brace + 1, line.lastIndexOf('}'));
				for (String pair : body.split(",(?=[a-zA-Z_]+=\")")) {
					int equals = pair.indexOf('=');
					if (equals > 0) {
						tags.put(pair.substring(0, equals), pair.substring(equals + 2, pair.length() - 1));
					}
				}
			}
			else {
				name = line.substring(0, space);
			}
			try {
				return new Sample(name, tags, Double.parseDouble(line.substring(space + 1)));
			}
			catch (NumberFormatException ex) {
				return null;
			}
		}

		boolean matches(Map<String, String> wanted) {
			for (Map.Entry<String, String> tag : wanted.entrySet()) {
				String actual = this.tags.get(tag.getKey());
				boolean negated = tag.getValue().startsWith("!");
				String value = negated ? tag.getValue().substring(1) : tag.getValue();
				if (negated == value.equals(actual)) {
					return false;
				}
			}
			return true;
		}

	}

}
