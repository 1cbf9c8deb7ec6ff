package dev.ratelimit.spring.autoconfigure;

import java.util.Locale;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.metrics.RateLimitKeysMeterBinder;
import dev.ratelimit.spring.metrics.RateLimitMetrics;

/**
 * Auto-configuration of the rate-limit metrics, when Micrometer and a
 * {@link MeterRegistry} are present. Boot's
 * {@code management.metrics.enable.ratelimit=false} turns every one of them off.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class, afterName = {
		"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, PolicyRegistry.class })
public final class RateLimitMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitMetrics rateLimitMetrics(MeterRegistry registry, PolicyRegistry policies, RateLimitProperties properties) {
		return new RateLimitMetrics(registry, policies, properties.getBackend().name().toLowerCase(Locale.ROOT));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(InMemoryRateLimiter.class)
	RateLimitKeysMeterBinder rateLimitKeysMeterBinder(InMemoryRateLimiter limiter) {
		return new RateLimitKeysMeterBinder(limiter);
	}

}
