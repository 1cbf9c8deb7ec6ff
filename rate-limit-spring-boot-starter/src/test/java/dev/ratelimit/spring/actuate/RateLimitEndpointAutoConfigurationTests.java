package dev.ratelimit.spring.actuate;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitEndpointAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitEndpointAutoConfiguration}: the endpoint exists only when it is available.
 */
class RateLimitEndpointAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitEndpointAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=2/1m");

	@Test
	void createsTheEndpointWhenItIsExposed() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class));
	}

	@Test
	void addsTheWebExtensionOnlyWhenTheEndpointIsExposedOverHttpAndSpringDaoIsPresent() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpointWebExtension.class));
		this.runner.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
				.doesNotHaveBean(RateLimitsEndpointWebExtension.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader("org.springframework.dao."))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitsEndpoint.class)
				.doesNotHaveBean(RateLimitsEndpointWebExtension.class));
	}

	@Test
	void createsNoEndpointWhenItIsNotExposed() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(RateLimitService.class)
			.doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void createsNoEndpointWhenItsAccessIsNone() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"management.endpoint.ratelimits.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void backsOffWithoutTheActuator() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitService.class)
				.doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void backsOffForTheUsersOwnEndpoint() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withUserConfiguration(OwnEndpointConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitsEndpoint.class);
				assertThat(context.getBean(RateLimitsEndpoint.class).rateLimits().failureMode()).isEqualTo("deny");
			});
	}

	@Test
	void isOffWhenRateLimitingIsDisabled() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits", "ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void describesTheBackendAndPoliciesWithoutFiltersOutsideAWebApplication() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"ratelimit.on-backend-failure=deny")
			.run((context) -> {
				RateLimitsDescriptor overview = context.getBean(RateLimitsEndpoint.class).rateLimits();
				assertThat(overview.backend()).isEqualTo("memory");
				assertThat(overview.failureMode()).isEqualTo("deny");
				assertThat(overview.policies()).containsOnlyKeys("api");
				assertThat(overview.filters()).isEmpty();
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnEndpointConfiguration {

		@Bean
		RateLimitsEndpoint ownEndpoint(RateLimitService service) {
			return new RateLimitsEndpoint(service, FailureMode.DENY, List::of);
		}

	}

}
