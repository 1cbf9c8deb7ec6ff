package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
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

/**
 * Auto-configuration of the Redis backend ({@code ratelimit.backend=redis}): a {@link RedisRateLimiter} on the
 * application's {@link RedisConnectionFactory}, so that every instance shares one quota.
 */
@AutoConfiguration(before = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass({ RedisConnectionFactory.class, RedisRateLimiter.class })
@ConditionalOnProperty(name = "ratelimit.backend", havingValue = "redis")
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitRedisAutoConfiguration {

	private static final String BACKEND = "redis";

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean(RateLimiter.class)
	@ConditionalOnBean(RedisConnectionFactory.class)
	RedisRateLimiter redisRateLimiter(RateLimitProperties properties, RedisConnectionFactory connectionFactory,
			ObjectProvider<TimeSource> timeSource, ObjectProvider<RateLimitListener> listeners) {
		RateLimitProperties.Redis redis = properties.getRedis();
		RedisRateLimiter.Builder builder = RedisRateLimiter.builder(connectionFactory);
		try {
			builder.keyPrefix(redis.getKeyPrefix());
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException("ratelimit.redis.key-prefix", ex.getMessage());
		}
		try {
			builder.timeout(redis.getTimeout());
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException("ratelimit.redis.timeout", ex.getMessage());
		}
		try {
			builder.lease(redis.getLease());
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException("ratelimit.redis.lease", ex.getMessage());
		}
		builder.failureMode(properties.getOnBackendFailure());
		if (properties.getOnBackendFailure() == FailureMode.LOCAL) {
			builder.localFallback(InMemoryRateLimiter.builder()
				.maxKeys(properties.getMemory().getMaxKeys())
				.timeSource(timeSource.getIfAvailable(TimeSource::system))
				.build());
		}
		List<RateLimitListener> failureListeners = listeners.orderedStream().toList();
		if (!failureListeners.isEmpty()) {
			builder.failureListener((failure) -> failureListeners
				.forEach((listener) -> listener.onBackendFailure(BACKEND, failure)));
		}
		return builder.build();
	}

}
