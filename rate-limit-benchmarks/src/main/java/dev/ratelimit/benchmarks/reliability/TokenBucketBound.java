package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.Map;

/**
 * The most a token bucket may admit for one client over an interval, from its
 * configuration alone.
 *
 * @param capacity the bucket's capacity
 * @param permits the permits it gains per period
 * @param period the period
 */
record TokenBucketBound(long capacity, long permits, Duration period) {

	/**
	 * Returns the permits the bucket gains over an interval, in whole permits.
	 */
	long refill(Duration elapsed) {
		return Math.floorDiv(Math.multiplyExact(this.permits, elapsed.toNanos()), this.period.toNanos());
	}

	/**
	 * Returns {@code capacity + rate × elapsed}: what one bucket admits at most over an
	 * interval, starting full.
	 */
	long admissions(Duration elapsed) {
		return this.capacity + refill(elapsed);
	}

	/**
	 * Returns the stated bound of a client's admissions over an interval when Redis lost
	 * its state {@code resets} times (a restarted Redis starts every bucket full again)
	 * and {@code localInstances} instances decided with their own in-memory limits while
	 * Redis failed ({@code on-backend-failure: local}): {@code (1 + resets) ×
	 * capacity + rate × t} from Redis, plus {@code capacity + rate × t} from each
	 * instance's local limits.
	 */
	long stated(Duration elapsed, int resets, int localInstances) {
		return (1L + resets) * this.capacity + refill(elapsed) + localInstances * admissions(elapsed);
	}

	/**
	 * Returns the admissions beyond a bound, summed over clients.
	 */
	static long beyond(Map<String, Long> admittedByClient, long bound) {
		long beyond = 0;
		for (long admitted : admittedByClient.values()) {
			beyond += Math.max(0, admitted - bound);
		}
		return beyond;
	}

	/**
	 * Returns the number of clients admitted beyond a bound.
	 */
	static long clientsBeyond(Map<String, Long> admittedByClient, long bound) {
		return admittedByClient.values().stream().filter((admitted) -> admitted > bound).count();
	}

}
