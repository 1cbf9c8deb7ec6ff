package dev.ratelimit.spring.autoconfigure;

import java.util.List;
import java.util.function.Supplier;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.actuate.FilterDescriptor;
import dev.ratelimit.spring.actuate.RateLimitOverridesEndpoint;
import dev.ratelimit.spring.actuate.RateLimitsEndpoint;
import dev.ratelimit.spring.actuate.RateLimitsEndpointJmxExtension;
import dev.ratelimit.spring.actuate.RateLimitsEndpointWebExtension;
import dev.ratelimit.spring.key.KeyResolverFactory;
import dev.ratelimit.spring.overrides.LimitOverrides;

/**
 * Auto-configuration of the {@code ratelimits} actuator endpoint, when it is available
 * (exposed and not disabled), and of its web extension, which answers {@code 503} while
 * the backend cannot be reached; and of the {@code ratelimitoverrides} endpoint, whose
 * {@code POST} over HTTP {@code RateLimitOverridesManagementContextConfiguration} serves
 * where the actuator is served.
 */
@AutoConfiguration(after = { RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
		RateLimitReactiveWebAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(RateLimitService.class)
public final class RateLimitEndpointAutoConfiguration {

	private static final boolean FILTERS_PRESENT = isPresent("org.springframework.web.util.pattern.PathPattern");

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	RateLimitsEndpoint rateLimitsEndpoint(RateLimitService service, RateLimitProperties properties,
			ListableBeanFactory beanFactory, ObjectProvider<KeyResolverFactory> keyResolvers) {
		Supplier<List<FilterDescriptor>> filters = FILTERS_PRESENT
				? () -> RateLimitFilterDescriptions.describe(beanFactory) : List::of;
		KeyResolverFactory factory = keyResolvers.getIfAvailable();
		return new RateLimitsEndpoint(service, properties.getOnBackendFailure(), filters,
				(factory != null) ? factory::create : null);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	RateLimitOverridesEndpoint rateLimitOverridesEndpoint(RateLimitService service, TimeSource timeSource) {
		LimitOverrides overrides = service.overrides();
		if (overrides == null) {
			throw new RateLimitConfigurationException("management.endpoint.ratelimitoverrides",
					"is available, but there is no LimitOverrides bean to keep overrides in;"
							+ " define one, or leave the endpoint unexposed");
		}
		return new RateLimitOverridesEndpoint(service, overrides,
				(specs, penalty) -> LimitSpecParser.parse(specs, "limits", penalty), timeSource::now);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(endpoint = RateLimitsEndpoint.class, exposure = EndpointExposure.JMX)
	RateLimitsEndpointJmxExtension rateLimitsEndpointJmxExtension(RateLimitsEndpoint endpoint) {
		return new RateLimitsEndpointJmxExtension(endpoint);
	}

	private static boolean isPresent(String className) {
		return ClassUtils.isPresent(className, RateLimitEndpointAutoConfiguration.class.getClassLoader());
	}

	/**
	 * The web extension, which maps the Redis backend's failures
	 * ({@code org.springframework.dao} exceptions, absent from an application without
	 * Spring Data Redis, whose in-memory backend cannot fail) to {@code 503}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.dao.DataAccessException")
	static class WebExtensionConfiguration {

		// conditions as the endpoint's (a member class is read before the outer class's
		// beans: no ConditionalOnBean)
		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnAvailableEndpoint(endpoint = RateLimitsEndpoint.class, exposure = EndpointExposure.WEB)
		RateLimitsEndpointWebExtension rateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
			return new RateLimitsEndpointWebExtension(endpoint);
		}

	}

}
