package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs calls from several threads against several limiter instances and counts what they
 * allowed.
 */
final class FleetSupport {

	private FleetSupport() {
	}

	/**
	 * Makes {@code attempts} calls in all, spread over {@code threadsPerInstance} threads
	 * per limiter, each call's limits chosen by {@code limits} from the attempt number;
	 * returns the allowed calls per attempt number's limits.
	 */
	static int[] hammer(List<RedisRateLimiter> fleet, int threadsPerInstance, int attempts,
			Function<Integer, List<KeyedLimit>> limits, int groups, Function<Integer, Integer> group) throws Exception {
		AtomicInteger next = new AtomicInteger();
		AtomicInteger[] allowed = new AtomicInteger[groups];
		for (int i = 0; i < groups; i++) {
			allowed[i] = new AtomicInteger();
		}
		ExecutorService executor = Executors.newFixedThreadPool(fleet.size() * threadsPerInstance);
		try {
			List<Future<?>> work = new ArrayList<>();
			for (RedisRateLimiter limiter : fleet) {
				for (int t = 0; t < threadsPerInstance; t++) {
					work.add(executor.submit(() -> {
						int attempt;
						while ((attempt = next.getAndIncrement()) < attempts) {
							Decision decision = limiter.acquire(limits.apply(attempt), 1);
							assertThat(decision.source()).as(decision::toString).isEqualTo(Decision.Source.BACKEND);
							if (decision.isAllowed()) {
								allowed[group.apply(attempt)].incrementAndGet();
							}
						}
						return null;
					}));
				}
			}
			for (Future<?> future : work) {
				future.get();
			}
		}
		finally {
			executor.shutdownNow();
		}
		int[] counts = new int[groups];
		for (int i = 0; i < groups; i++) {
			counts[i] = allowed[i].get();
		}
		return counts;
	}

}
