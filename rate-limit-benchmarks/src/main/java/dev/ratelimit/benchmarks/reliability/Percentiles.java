package dev.ratelimit.benchmarks.reliability;

import java.util.Arrays;
import java.util.Collection;

/**
 * Percentiles of a set of measurements, by the nearest-rank method.
 */
final class Percentiles {

	private final double[] sorted;

	private Percentiles(double[] sorted) {
		this.sorted = sorted;
	}

	static Percentiles of(Collection<Double> values) {
		double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
		Arrays.sort(sorted);
		return new Percentiles(sorted);
	}

	static Percentiles of(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		return new Percentiles(sorted);
	}

	int count() {
		return this.sorted.length;
	}

	/**
	 * Returns the value at a percentile (0 to 100), or NaN without measurements.
	 */
	double at(double percentile) {
		if (this.sorted.length == 0) {
			return Double.NaN;
		}
		int rank = (int) Math.ceil(percentile / 100 * this.sorted.length);
		return this.sorted[Math.max(0, Math.min(this.sorted.length - 1, rank - 1))];
	}

	double max() {
		return (this.sorted.length == 0) ? Double.NaN : this.sorted[this.sorted.length - 1];
	}

	double median() {
		return at(50);
	}

}
