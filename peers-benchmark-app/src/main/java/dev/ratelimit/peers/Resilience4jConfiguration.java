package dev.ratelimit.peers;

import io.github.resilience4j.ratelimiter.RateLimiterRegistry;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The {@code resilience4j} variant: {@code @RateLimiter} names one limiter for a method,
 * but a limit per API key needs one per key, so an interceptor takes each key's limiter
 * from the registry that {@code resilience4j-spring-boot4} configures, with the
 * configuration named after the key's tier ({@code resilience4j.ratelimiter.configs}).
 */
@Configuration(proxyBeanMethods = false)
@Profile("resilience4j")
class Resilience4jConfiguration implements WebMvcConfigurer {

	private final RateLimiterRegistry registry;

	private final ApiKeyTiers tiers;

	Resilience4jConfiguration(RateLimiterRegistry registry, ApiKeyTiers tiers) {
		this.registry = registry;
		this.tiers = tiers;
	}

	@Override
	public void addInterceptors(InterceptorRegistry registry) {
		registry.addInterceptor(new Resilience4jRateLimitInterceptor(this.registry, this.tiers))
			.addPathPatterns("/api/**");
	}

}
