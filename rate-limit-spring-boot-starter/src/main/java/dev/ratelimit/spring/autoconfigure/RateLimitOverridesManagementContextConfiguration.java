package dev.ratelimit.spring.autoconfigure;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.Assert;

import dev.ratelimit.spring.actuate.RateLimitOverridesEndpoint;
import dev.ratelimit.spring.actuate.RateLimitOverridesWriteMapping;
import dev.ratelimit.spring.actuate.ReactiveRateLimitOverridesWriteMapping;

/**
 * The {@code POST} of the {@code ratelimitoverrides} endpoint over HTTP, whose body an
 * actuator operation cannot read: a handler mapping of the actuator's web stack, served
 * where the actuator serves its endpoints and under its security. Boot imports it into
 * the application's context when the actuator shares the application's port, into the
 * management context when it has a port of its own, and nowhere when it is off HTTP.
 */
@ManagementContextConfiguration(proxyBeanMethods = false)
@ConditionalOnClass(name = "tools.jackson.databind.json.JsonMapper")
@ConditionalOnBean({ RateLimitOverridesEndpoint.class, PathMappedEndpoints.class })
@ConditionalOnAvailableEndpoint(endpoint = RateLimitOverridesEndpoint.class, exposure = EndpointExposure.WEB)
@ConditionalOnExpression("!'${management.endpoint.ratelimitoverrides.access:${management.endpoints.access.default:unrestricted}}'.equalsIgnoreCase('read-only')")
final class RateLimitOverridesManagementContextConfiguration {

	private static final EndpointId ENDPOINT = EndpointId.of("ratelimitoverrides");

	/**
	 * Returns the endpoint's path within the actuator's web server, as the actuator maps
	 * it: {@code management.endpoints.web.base-path} and the endpoint's path mapping.
	 */
	static String path(PathMappedEndpoints endpoints) {
		String path = endpoints.getPath(ENDPOINT);
		Assert.state(path != null, "The ratelimitoverrides endpoint is exposed over HTTP but has no path");
		return path;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
	static class ServletOverridesWriteConfiguration {

		@Bean
		RateLimitOverridesWriteMapping rateLimitOverridesWriteMapping(RateLimitOverridesEndpoint endpoint,
				PathMappedEndpoints endpoints) {
			return new RateLimitOverridesWriteMapping(endpoint, path(endpoints));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass(name = "org.springframework.web.reactive.DispatcherHandler")
	static class ReactiveOverridesWriteConfiguration {

		@Bean
		ReactiveRateLimitOverridesWriteMapping reactiveRateLimitOverridesWriteMapping(
				RateLimitOverridesEndpoint endpoint, PathMappedEndpoints endpoints) {
			return new ReactiveRateLimitOverridesWriteMapping(endpoint, path(endpoints));
		}

	}

}
