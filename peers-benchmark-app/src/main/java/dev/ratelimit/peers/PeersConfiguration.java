package dev.ratelimit.peers;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What every variant shares: the tiers of the API keys, a bean so that Bucket4j's
 * conditions can name it ({@code @apiKeyTiers}).
 */
@Configuration(proxyBeanMethods = false)
class PeersConfiguration {

	@Bean
	ApiKeyTiers apiKeyTiers() {
		return new ApiKeyTiers();
	}

}
