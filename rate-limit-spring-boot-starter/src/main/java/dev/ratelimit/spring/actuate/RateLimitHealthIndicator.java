package dev.ratelimit.spring.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.failure.BackendState;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.util.ClassUtils;

/**
 * The {@code rateLimit} health contributor: {@code UP} while Redis decides calls,
 * {@code DOWN} when it decides none (it is down, or answered late and the limiter's
 * cool-down runs), saying what decides them meanwhile. On a Redis Cluster, {@code UP}
 * while any master decides calls, naming the slots of those that do not. The in-memory
 * backend is always up. Failures name the exception's type only: its message, which names
 * Redis's host and port, goes to the log.
 */
public class RateLimitHealthIndicator implements HealthIndicator {

	private static final Log logger = LogFactory.getLog(RateLimitHealthIndicator.class);

	private static final String DOWN_MESSAGE = "Redis did not answer the rate limiter's check;"
			+ " the cause is in the application's log";

	private static final boolean REDIS_PRESENT = ClassUtils.isPresent(
			"org.springframework.data.redis.connection.RedisConnectionFactory",
			RateLimitHealthIndicator.class.getClassLoader());

	private final RateLimiter limiter;

	private final String backend;

	private final FailureMode failureMode;

	private final @Nullable Runnable ping;

	private final AtomicBoolean down = new AtomicBoolean();

	/**
	 * Creates the indicator.
	 * @param limiter the limiter whose backend to check
	 * @param backend the backend name, such as {@code memory} or {@code redis}
	 * @param failureMode what the limiter does with calls while its backend fails
	 */
	public RateLimitHealthIndicator(RateLimiter limiter, String backend, FailureMode failureMode) {
		this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
		this.backend = Objects.requireNonNull(backend, "backend must not be null");
		this.failureMode = Objects.requireNonNull(failureMode, "failureMode must not be null");
		this.ping = REDIS_PRESENT ? RedisPing.of(limiter) : null;
	}

	@Override
	public Health health() {
		Health.Builder builder = Health.up()
			.withDetail("backend", this.backend)
			.withDetail("failureMode", this.failureMode.toString());
		if (this.limiter instanceof InMemoryRateLimiter memory) {
			return builder.withDetail("keys", memory.keyCount()).build();
		}
		if (this.ping == null) {
			return builder.build();
		}
		RuntimeException failure = null;
		try {
			this.ping.run();
		}
		catch (RuntimeException ex) {
			failure = ex;
			logDown(ex);
		}
		// what decides calls now: the check's outcome, and what the limiter learned
		// before it (a cool-down that a check in time does not end)
		RedisPing.State state = RedisPing.state(this.limiter);
		if (failure == null) {
			this.down.set(false);
		}
		else {
			// the exception's message names Redis's host and port, and a contributor
			// cannot know who asks for its details: the type and fixed words only, the
			// message to the log
			builder.withDetail("error", failure.getClass().getName()).withDetail("message", DOWN_MESSAGE);
		}
		if (!state.masters().isEmpty()) {
			return cluster(builder, state.masters());
		}
		if (state.state() == BackendState.UP && failure == null) {
			return builder.build();
		}
		return builder.down()
			.withDetail("whileDown",
					(state.state() == BackendState.LATE) ? whileLate(this.failureMode) : whileDown(this.failureMode))
			.build();
	}

	/**
	 * The health of a Redis Cluster: {@code DOWN} only when no master decides calls, as
	 * Boot's Redis contributor is {@code DOWN} only when the cluster's state is
	 * {@code fail}; otherwise {@code UP}, naming each master that does not decide calls,
	 * its slots, and what decides its calls meanwhile.
	 */
	private Health cluster(Health.Builder builder, List<RedisPing.Master> masters) {
		List<Map<String, Object>> unavailable = new ArrayList<>();
		int slotsUp = 0;
		for (RedisPing.Master master : masters) {
			if (master.state() == BackendState.UP) {
				slotsUp += master.slotCount();
				continue;
			}
			Map<String, Object> described = new LinkedHashMap<>();
			described.put("node", master.nodeId());
			described.put("slots", master.slots());
			described.put("state", master.state().name().toLowerCase(Locale.ROOT));
			described.put("whileDown", (master.state() == BackendState.LATE) ? whileMasterLate(this.failureMode)
					: whileMasterDown(this.failureMode));
			unavailable.add(described);
		}
		builder.withDetail("masters", masters.size())
			.withDetail("mastersUp", masters.size() - unavailable.size())
			.withDetail("slotsUp", slotsUp);
		if (!unavailable.isEmpty()) {
			builder.withDetail("unavailableMasters", unavailable);
		}
		return (unavailable.size() == masters.size()) ? builder.down().build() : builder.build();
	}

	/**
	 * Logs a failed check: at warn level when Redis has just gone down, at debug level
	 * while it stays down, since health is polled often.
	 */
	private void logDown(RuntimeException ex) {
		if (this.down.compareAndSet(false, true)) {
			logger.warn("Rate-limit health check failed: the " + this.backend + " backend did not answer", ex);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Rate-limit health check failed again", ex);
		}
	}

	/**
	 * What calls get while Redis answers, but later than the timeout: never a free pass,
	 * whatever the mode.
	 */
	private static String whileLate(FailureMode failureMode) {
		return (failureMode == FailureMode.DENY)
				? "Redis answers late: calls are rejected (503) until it answers in time"
				: "Redis answers late: calls are limited by in-memory limits local to each instance until it answers in "
						+ "time";
	}

	private static String whileDown(FailureMode failureMode) {
		return switch (failureMode) {
			case ALLOW -> "calls are allowed without rate limiting until Redis answers again";
			case DENY -> "calls are rejected (503) until Redis answers again";
			case LOCAL -> "calls are limited by in-memory limits local to each instance until Redis answers again";
		};
	}

	private static String whileMasterLate(FailureMode failureMode) {
		return (failureMode == FailureMode.DENY)
				? "the master answers late: its slots' calls are rejected (503) until it answers in time"
				: "the master answers late: its slots' calls are limited by in-memory limits local to each instance "
						+ "until it answers in time";
	}

	private static String whileMasterDown(FailureMode failureMode) {
		return switch (failureMode) {
			case ALLOW -> "its slots' calls are allowed without rate limiting until the master answers again";
			case DENY -> "its slots' calls are rejected (503) until the master answers again";
			case LOCAL -> "its slots' calls are limited by in-memory limits local to each instance until the master "
					+ "answers again";
		};
	}

	/**
	 * Reaches the Redis limiter; loaded only when spring-data-redis is present.
	 */
	private static final class RedisPing {

		static @Nullable Runnable of(RateLimiter limiter) {
			return (limiter instanceof RedisRateLimiter redis) ? redis::ping : null;
		}

		/**
		 * Returns what the limiter knows of Redis, and of each master of a cluster.
		 */
		static State state(RateLimiter limiter) {
			RedisRateLimiter redis = (RedisRateLimiter) limiter;
			List<Master> masters = new ArrayList<>();
			for (RedisRateLimiter.ClusterMaster master : redis.clusterMasters()) {
				masters.add(new Master(master.nodeId(), master.slots(), master.slotCount(), master.state()));
			}
			return new State(redis.state(), masters);
		}

		/**
		 * What the limiter knows of Redis as a whole, and of each master of a cluster
		 * (none for a standalone or Sentinel Redis).
		 */
		record State(BackendState state, List<Master> masters) {

		}

		record Master(String nodeId, String slots, int slotCount, BackendState state) {

		}

	}

}
