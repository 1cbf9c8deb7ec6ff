package dev.ratelimit.spring.actuate;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.util.ClassUtils;

/**
 * The {@code rateLimit} health contributor: {@code UP} with the backend's details while
 * it answers, {@code DOWN} when Redis does not answer a ping within the limiter's
 * timeout, saying which failure mode now decides the calls. The in-memory backend is
 * always up. A {@code DOWN} names the exception's type only: its message, which names
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
		try {
			this.ping.run();
			this.down.set(false);
			return builder.build();
		}
		catch (RuntimeException ex) {
			logDown(ex);
			// the exception's message names Redis's host and port, and a contributor
			// cannot know who asks for its
			// details: the type and fixed words only, the message to the log
			return builder.down()
				.withDetail("error", ex.getClass().getName())
				.withDetail("message", DOWN_MESSAGE)
				.withDetail("whileDown",
						RedisPing.isLate(this.limiter) ? whileLate(this.failureMode) : whileDown(this.failureMode))
				.build();
		}
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

	/**
	 * Reaches the Redis limiter; loaded only when spring-data-redis is present.
	 */
	private static final class RedisPing {

		static @Nullable Runnable of(RateLimiter limiter) {
			return (limiter instanceof RedisRateLimiter redis) ? redis::ping : null;
		}

		/**
		 * Returns whether a failed check left Redis late rather than down (it timed out
		 * on a connection that is up), which the limiter does not decide by the failure
		 * mode.
		 */
		static boolean isLate(RateLimiter limiter) {
			return limiter instanceof RedisRateLimiter redis && redis.isAvailable();
		}

	}

}
