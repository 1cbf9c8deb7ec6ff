package dev.ratelimit.spring.autoconfigure;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitListener;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.Sleeper;
import dev.ratelimit.spring.TierResolver;
import dev.ratelimit.spring.annotation.RateLimitedMethods;
import dev.ratelimit.spring.key.AuthorityTierResolver;
import dev.ratelimit.spring.key.ClientAddressResolver;
import dev.ratelimit.spring.key.KeyResolverFactory;
import dev.ratelimit.spring.key.RequestAttributeTierResolver;
import dev.ratelimit.spring.overrides.CachingLimitOverrides;
import dev.ratelimit.spring.overrides.InMemoryLimitOverrides;
import dev.ratelimit.spring.overrides.LimitOverrides;

/**
 * Auto-configuration of the rate limiter: the policies, key and tier resolution, the
 * in-memory backend and the {@link RateLimitService} that filter and annotation share.
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

	private static final String DISPATCHER_HANDLER = "org.springframework.web.reactive.DispatcherHandler";

	private static final String SECURITY_CONTEXT = "org.springframework.security.core.context.SecurityContextHolder";

	private static final String DISPATCHER_SERVLET = "org.springframework.web.servlet.DispatcherServlet";

	private static final String CLAIM_ACCESSOR = "org.springframework.security.oauth2.core.ClaimAccessor";

	private static final String TIER_CLAIM = "ratelimit.client.tier-claim";

	@Bean
	@ConditionalOnMissingBean
	TimeSource rateLimitTimeSource() {
		return TimeSource.system();
	}

	@Bean
	@ConditionalOnMissingBean
	Sleeper rateLimitSleeper() {
		return Sleeper.threadSleep();
	}

	@Bean
	@ConditionalOnMissingBean
	ClientAddressResolver rateLimitClientAddressResolver(RateLimitProperties properties) {
		return new ClientAddressResolver(PolicyRegistryFactory.trustedProxies(properties),
				properties.getClient().getForwardedHeader(), PolicyRegistryFactory.ipv6PrefixLength(properties));
	}

	@Bean
	@ConditionalOnMissingBean
	KeyResolverFactory rateLimitKeyResolverFactory(RateLimitProperties properties,
			ClientAddressResolver addressResolver, BeanFactory beanFactory) {
		return new KeyResolverFactory(addressResolver, properties.getClient().getApiKeyHeader(),
				PolicyRegistryFactory.apiKeySecret(properties), beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	PolicyRegistry rateLimitPolicies(RateLimitProperties properties, KeyResolverFactory keyResolvers) {
		return PolicyRegistryFactory.policies(properties, keyResolvers);
	}

	@Bean
	@ConditionalOnMissingBean(RateLimiter.class)
	@ConditionalOnRateLimitBackend(RateLimitProperties.Backend.MEMORY)
	InMemoryRateLimiter rateLimiter(RateLimitProperties properties, TimeSource timeSource) {
		// this bean may be created before the policies, whose checks include these
		PolicyRegistryFactory.checkGeneral(properties);
		return InMemoryRateLimiter.builder()
			.maxKeys(properties.getMemory().getMaxKeys())
			.timeSource(timeSource)
			.build();
	}

	@Bean
	@ConditionalOnMissingBean(RateLimiter.class)
	@ConditionalOnRateLimitBackend(RateLimitProperties.Backend.REDIS)
	RateLimiter rateLimiterWithoutRedis() {
		throw new RateLimitConfigurationException("ratelimit.backend",
				"is 'redis', but there is no RedisConnectionFactory bean to build the Redis rate limiter with;"
						+ " add spring-boot-starter-data-redis and configure spring.data.redis.*, or use"
						+ " ratelimit.backend=memory");
	}

	@Bean
	@ConditionalOnMissingBean(LimitOverrides.class)
	@ConditionalOnRateLimitBackend(RateLimitProperties.Backend.MEMORY)
	InMemoryLimitOverrides rateLimitOverrides() {
		return new InMemoryLimitOverrides();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitService rateLimitService(RateLimiter rateLimiter, PolicyRegistry policies, TierResolver tierResolver,
			ObjectProvider<RateLimitListener> listeners, RateLimitProperties properties,
			ObjectProvider<LimitOverrides> overrides, TimeSource timeSource) {
		LimitOverrides store = overrides.getIfUnique();
		if (store != null && !(store instanceof InMemoryLimitOverrides)) {
			// an application's own store, such as a database: cached, bounded
			RateLimitProperties.Overrides cache = properties.getOverrides();
			store = new CachingLimitOverrides(store, cache.getCacheSize(), cache.getCacheTtl(), System::nanoTime);
		}
		return new RateLimitService(rateLimiter, policies, tierResolver, listeners.orderedStream().toList(),
				properties.getBackend().name().toLowerCase(java.util.Locale.ROOT), store, timeSource);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitConfigurationReloader rateLimitConfigurationReloader(Environment environment, RateLimitService service,
			KeyResolverFactory keyResolvers, ObjectProvider<RateLimitedMethods> annotatedMethods,
			ListableBeanFactory beanFactory, ObjectProvider<RateLimitListener> listeners) {
		return new RateLimitConfigurationReloader(environment, service, keyResolvers, annotatedMethods,
				RateLimitConfigurationReloader.filterRules(beanFactory), listeners.orderedStream().toList());
	}

	/**
	 * Reloads the configuration when Spring Cloud reports a changed Environment.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = RateLimitRefreshListener.ENVIRONMENT_CHANGE_EVENT)
	static class RefreshConfiguration {

		@Bean
		RateLimitRefreshListener rateLimitRefreshListener(RateLimitConfigurationReloader reloader) {
			return new RateLimitRefreshListener(reloader);
		}

	}

	@Bean
	@Conditional(WithoutServletMvc.class)
	UnappliedFilterRules rateLimitUnappliedFilterRules(RateLimitProperties properties,
			ApplicationContext applicationContext) {
		return UnappliedFilterRules.check(properties, applicationContext);
	}

	/**
	 * Matches an application where neither {@link RateLimitWebAutoConfiguration} nor
	 * {@link RateLimitReactiveWebAutoConfiguration} applies the filter rules.
	 */
	static final class WithoutServletMvc extends NoneNestedConditions {

		WithoutServletMvc() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
		@ConditionalOnClass(name = DISPATCHER_SERVLET)
		static final class ServletMvc {

		}

		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
		@ConditionalOnClass(name = DISPATCHER_HANDLER)
		static final class WebFlux {

		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = SECURITY_CONTEXT)
	static class SecurityTierConfiguration {

		@Bean
		@ConditionalOnMissingBean
		TierResolver rateLimitTierResolver(RateLimitProperties properties, ApplicationContext applicationContext) {
			String claim = properties.getClient().getTierClaim();
			if (!StringUtils.hasText(claim)) {
				return new AuthorityTierResolver();
			}
			if (!ClassUtils.isPresent(CLAIM_ACCESSOR, applicationContext.getClassLoader())) {
				throw new RateLimitConfigurationException(TIER_CLAIM, "is '" + claim
						+ "', but spring-security-oauth2-core, which reads claims, is not on the class path; add"
						+ " spring-boot-starter-security-oauth2-resource-server (JWTs) or"
						+ " spring-boot-starter-security-oauth2-client (OIDC login), or remove " + TIER_CLAIM);
			}
			return new AuthorityTierResolver(claim);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass(SECURITY_CONTEXT)
	static class RequestAttributeTierConfiguration {

		@Bean
		@ConditionalOnMissingBean
		TierResolver rateLimitTierResolver(RateLimitProperties properties) {
			String claim = properties.getClient().getTierClaim();
			if (StringUtils.hasText(claim)) {
				throw new RateLimitConfigurationException(TIER_CLAIM, "is '" + claim
						+ "', but Spring Security, whose authentication holds the claim, is not on the class path;"
						+ " add spring-boot-starter-security-oauth2-resource-server (JWTs) or"
						+ " spring-boot-starter-security-oauth2-client (OIDC login), or remove " + TIER_CLAIM);
			}
			return new RequestAttributeTierResolver();
		}

	}

}
