package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitListener;
import dev.ratelimit.spring.RateLimitListeners;
import dev.ratelimit.spring.overrides.LimitOverrides;
import dev.ratelimit.spring.overrides.RedisLimitOverrides;

/**
 * Auto-configuration of the Redis backend ({@code ratelimit.backend=redis}): a
 * {@link RedisRateLimiter} on the application's {@link RedisConnectionFactory}, so that
 * every instance shares one quota.
 */
@AutoConfiguration(before = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass({ RedisConnectionFactory.class, RedisRateLimiter.class })
@ConditionalOnRateLimitBackend(RateLimitProperties.Backend.REDIS)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitRedisAutoConfiguration {

	private static final Log logger = LogFactory.getLog(RateLimitRedisAutoConfiguration.class);

	private static final String BACKEND = "redis";

	/** How often each instance checks whether the overrides in Redis changed. */
	private static final long OVERRIDES_CHECK_MILLIS = 500;

	/** The longest a change of the overrides in Redis, or a load of them, waits. */
	private static final Duration OVERRIDES_TIMEOUT = Duration.ofSeconds(2);

	@Bean
	@ConditionalOnMissingBean(LimitOverrides.class)
	@ConditionalOnBean(RedisConnectionFactory.class)
	RedisLimitOverrides rateLimitOverrides(RateLimitProperties properties, RedisConnectionFactory connectionFactory) {
		Duration startupWait = properties.getRedis().getStartupTimeout();
		return new RedisLimitOverrides(connectionFactory, properties.getRedis().getKeyPrefix(), OVERRIDES_CHECK_MILLIS,
				(startupWait != null && !startupWait.isNegative()) ? startupWait : Duration.ZERO, OVERRIDES_TIMEOUT);
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean(RateLimiter.class)
	@ConditionalOnBean(RedisConnectionFactory.class)
	RedisRateLimiter redisRateLimiter(RateLimitProperties properties, RedisConnectionFactory connectionFactory,
			ObjectProvider<TimeSource> timeSource, ObjectProvider<RateLimitListener> listeners) {
		RateLimitProperties.Redis redis = properties.getRedis();
		// this bean may be created before the policies, whose checks include these
		PolicyRegistryFactory.checkRedis(properties);
		RedisRateLimiter.Builder builder = RedisRateLimiter.builder(connectionFactory)
			.keyPrefix(redis.getKeyPrefix())
			.timeout(redis.getTimeout())
			.reservoir(PolicyRegistryFactory.reservoir(redis));
		Duration startupTimeout = redis.getStartupTimeout();
		if (startupTimeout == null || startupTimeout.isNegative()) {
			throw new RateLimitConfigurationException("ratelimit.redis.startup-timeout",
					"must be zero or positive (was " + startupTimeout + ")");
		}
		builder.failureMode(properties.getOnBackendFailure());
		if (properties.getOnBackendFailure() != FailureMode.DENY) {
			// decides the calls Redis answers late, and in local mode every call while
			// Redis is down
			builder.localFallback(InMemoryRateLimiter.builder()
				.maxKeys(properties.getMemory().getMaxKeys())
				.timeSource(timeSource.getIfAvailable(TimeSource::system))
				.build());
		}
		RateLimitListeners failureListeners = new RateLimitListeners(listeners.orderedStream().toList());
		if (!failureListeners.isEmpty()) {
			builder.failureListener((failure) -> failureListeners.backendFailed(BACKEND, failure));
		}
		RedisRateLimiter limiter = builder.build();
		// before the web server starts, so that the first requests find the connection
		// open and the script loaded
		if (!startupTimeout.isZero() && !limiter.awaitReady(startupTimeout)) {
			logger.warn("Redis did not take the rate limiter's first write within " + startupTimeout
					+ "; calls follow ratelimit.on-backend-failure=" + properties.getOnBackendFailure()
					+ " until it does");
		}
		return limiter;
	}

}
