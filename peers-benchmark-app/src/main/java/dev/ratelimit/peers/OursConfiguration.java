package dev.ratelimit.peers;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.TierResolver;

/**
 * Our starter's variants ({@code memory}, {@code redis}, {@code redis-reservoir}): the
 * tier from the API key's entry in {@link ApiKeyTiers}, and on Redis a count of the Redis
 * calls that failed.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
class OursConfiguration {

	@Bean
	TierResolver apiKeyTierResolver(ApiKeyTiers tiers) {
		return (context) -> {
			RateLimitRequest request = context.request();
			return tiers.tierOf((request != null) ? request.getHeader(ApiKeyTiers.HEADER) : null);
		};
	}

	@Bean
	@ConditionalOnProperty(name = "ratelimit.backend", havingValue = "redis")
	BackendFailures backendFailures() {
		return new BackendFailures();
	}

}
