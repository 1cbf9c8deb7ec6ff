package dev.ratelimit.spring.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.actuate.RateLimitHealthIndicator;

/**
 * Auto-configuration of the {@code rateLimit} health contributor;
 * {@code management.health.ratelimit.enabled=false} turns it off.
 */
@AutoConfiguration(after = { RateLimitAutoConfiguration.class, RateLimitRedisAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(RateLimitService.class)
@ConditionalOnEnabledHealthIndicator("ratelimit")
public final class RateLimitHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = { "rateLimitHealthIndicator", "rateLimitHealthContributor" })
	RateLimitHealthIndicator rateLimitHealthIndicator(RateLimitService service, RateLimitProperties properties) {
		return new RateLimitHealthIndicator(service.limiter(), service.backend(), properties.getOnBackendFailure());
	}

}
