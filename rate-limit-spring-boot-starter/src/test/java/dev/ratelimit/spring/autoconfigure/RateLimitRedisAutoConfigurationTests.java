package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend's auto-configuration, without a Redis server (nothing connects until the first decision).
 */
class RateLimitRedisAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitRedisAutoConfiguration.class,
				RateLimitAutoConfiguration.class))
		.withBean(RedisConnectionFactory.class, () -> new LettuceConnectionFactory("localhost", 1))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s");

	@Test
	void createsARedisRateLimiterWithTheConfiguredFailureModeWhenTheBackendIsRedis() {
		this.runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.on-backend-failure=deny")
			.run((context) -> {
				assertThat(context).hasSingleBean(RedisRateLimiter.class).doesNotHaveBean(InMemoryRateLimiter.class);
				assertThat(context.getBean(RedisRateLimiter.class).failureMode()).isEqualTo(FailureMode.DENY);
			});
	}

	@Test
	void keepsTheInMemoryBackendByDefault() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimiter.class)
			.doesNotHaveBean(RedisRateLimiter.class));
	}

	@Test
	void backsOffForAUserRateLimiter() {
		RateLimiter user = InMemoryRateLimiter.builder().build();
		this.runner.withPropertyValues("ratelimit.backend=redis")
			.withBean("userLimiter", RateLimiter.class, () -> user)
			.run((context) -> assertThat(context).getBean(RateLimiter.class).isSameAs(user));
	}

	@Test
	void failsStartUpForAnInvalidKeyPrefix() {
		this.runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.key-prefix=r{l}")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.redis.key-prefix"));
	}

}
