package dev.ratelimit.spring.actuate;

import java.util.List;
import java.util.Map;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.assertj.core.api.InstanceOfAssertFactories;

import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jmx.JmxEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementContextAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jmx.JmxAutoConfiguration;
import org.springframework.boot.reactor.netty.autoconfigure.actuate.web.server.NettyReactiveManagementContextAutoConfiguration;
import org.springframework.boot.tomcat.autoconfigure.actuate.web.server.TomcatServletManagementContextAutoConfiguration;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.support.ConfigurableConversionService;
import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitEndpointAutoConfiguration;
import dev.ratelimit.spring.key.KeyResolverFactory;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitEndpointAutoConfiguration}: the endpoint exists only when it is
 * available; and the overrides' {@code POST} mapping, which Boot imports where the
 * actuator is served.
 */
class RateLimitEndpointAutoConfigurationTests {

	private static final String POLICY = "ratelimit.policies.api.limits[0].rate=2/1m";

	private final AutoConfigurations configurations = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitEndpointAutoConfiguration.class);

	/**
	 * With the actuator's web infrastructure, which imports the management context
	 * configurations into this context when the actuator shares the application's port.
	 */
	private final AutoConfigurations management = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitEndpointAutoConfiguration.class, EndpointAutoConfiguration.class,
			WebEndpointAutoConfiguration.class, ManagementContextAutoConfiguration.class);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(this.configurations)
		.withPropertyValues(POLICY);

	@Test
	void createsTheEndpointWhenItIsExposed() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class));
	}

	@Test
	void addsTheWebExtensionOnlyWhenTheEndpointIsExposedOverHttpAndSpringDaoIsPresent() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpointWebExtension.class)
				.doesNotHaveBean(RateLimitsEndpointJmxExtension.class));
		this.runner
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
				.hasSingleBean(RateLimitsEndpointJmxExtension.class)
				.doesNotHaveBean(RateLimitsEndpointWebExtension.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader("org.springframework.dao."))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitsEndpoint.class)
				.doesNotHaveBean(RateLimitsEndpointWebExtension.class));
	}

	@Test
	void overJmxNamesAClientByOneStringEvenWithASlashOrAComma() {
		this.runner
			.withConfiguration(AutoConfigurations.of(JmxAutoConfiguration.class, EndpointAutoConfiguration.class,
					JmxEndpointAutoConfiguration.class))
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=ratelimits",
					"ratelimit.policies.api.key=header:X-Client")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitsEndpointJmxExtension.class);
				MBeanServer server = context.getBean(MBeanServer.class);
				ObjectName name = server.queryNames(new ObjectName("*:type=Endpoint,name=Ratelimits,*"), null)
					.iterator()
					.next();
				String[] signature = { String.class.getName(), String.class.getName(), String.class.getName(),
						String.class.getName() };
				RateLimitService service = context.getBean(RateLimitService.class);
				MockHttpServletRequest request = new MockHttpServletRequest();
				request.addHeader("X-Client", "a/b,c");
				service.decide(List.of("api"), 1,
						RateLimitContext.forRequest(new ServletRateLimitRequest(request), null));
				@SuppressWarnings("unchecked")
				Map<String, Object> state = (Map<String, Object>) server.invoke(name, "key",
						new Object[] { "api", "a/b,c", null, null }, signature);
				assertThat(state).extractingByKey("limits")
					.asInstanceOf(InstanceOfAssertFactories.LIST)
					.singleElement()
					.asInstanceOf(InstanceOfAssertFactories.MAP)
					.hasEntrySatisfying("remaining", (remaining) -> assertThat(remaining).asString().isEqualTo("1"));
				server.invoke(name, "reset", new Object[] { "api", "a/b,c", null },
						new String[] { String.class.getName(), String.class.getName(), String.class.getName() });
				assertThat(service
					.decide(List.of("api"), 1, RateLimitContext.forRequest(new ServletRateLimitRequest(request), null))
					.decision()
					.statuses()
					.get(0)
					.remaining()).isEqualTo(1);
			});
	}

	@Test
	void namesAClientByApiKeyWithTheSecretThatTheDecisionPathHashesWith() {
		String secret = "correct horse battery staple";
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"ratelimit.policies.api.key=api-key", "ratelimit.policies.other.key=header:X-Client",
					"ratelimit.policies.other.limits[0].rate=3/1m", "ratelimit.client.api-key-secret=" + secret)
			.run((context) -> {
				// HMAC-SHA-256 of "demo-free" with the secret, as computed outside Java
				String hmac = "key:b8a1b9e261072b25f4cf952f44833309c9aae0b10c1b4d316b244aca3c9f5acb";
				assertThat(context.getBean(KeyResolverFactory.class).create("api-key").storedKey("demo-free"))
					.isEqualTo(hmac);
				RateLimitService service = context.getBean(RateLimitService.class);
				MockHttpServletRequest request = new MockHttpServletRequest();
				request.addHeader("X-API-Key", "demo-free");
				request.addHeader("X-Client", "tenant");
				RateLimitContext call = RateLimitContext.forRequest(new ServletRateLimitRequest(request), null);
				service.decideApplied(List.of(AppliedPolicy.of(service.policies().get("api")), new AppliedPolicy(
						service.policies().get("other"), context.getBean(KeyResolverFactory.class).create("api-key"))),
						1, call);
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				assertThat(endpoint.key("api", "demo-free", null).limits()).singleElement()
					.satisfies((limit) -> assertThat(limit.remaining()).isEqualTo(1));
				assertThat(endpoint.key("other", new String[] { "demo-free" }, null, "api-key").limits())
					.singleElement()
					.satisfies((limit) -> assertThat(limit.remaining()).isEqualTo(2));
				assertThat(endpoint.rateLimits().toString()).doesNotContain(secret);
				assertThat(context.getBean(KeyResolverFactory.class).create("api-key").toString())
					.doesNotContain(secret);
			});
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
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits", "ratelimit.enabled=false")
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

	@Test
	void servesTheOverridesPostWithAMappingOfTheApplicationsWebStackOnly() {
		String exposed = "management.endpoints.web.exposure.include=ratelimitoverrides";
		new WebApplicationContextRunner().withConfiguration(this.management)
			.withPropertyValues(POLICY, exposed)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitOverridesWriteMapping.class)
				.doesNotHaveBean(ReactiveRateLimitOverridesWriteMapping.class));
		new ReactiveWebApplicationContextRunner().withConfiguration(this.management)
			.withPropertyValues(POLICY, exposed)
			.run((context) -> assertThat(context).hasSingleBean(ReactiveRateLimitOverridesWriteMapping.class)
				.doesNotHaveBean(RateLimitOverridesWriteMapping.class));
		this.runner.withConfiguration(this.management)
			.withPropertyValues(exposed)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitOverridesEndpoint.class)
				.doesNotHaveBean(RateLimitOverridesWriteMapping.class)
				.doesNotHaveBean(ReactiveRateLimitOverridesWriteMapping.class));
	}

	@Test
	void servesTheOverridesPostAtTheEndpointsPathAsTheActuatorMapsIt() {
		new WebApplicationContextRunner().withConfiguration(this.management)
			.withPropertyValues(POLICY, "management.endpoints.web.exposure.include=ratelimitoverrides",
					"management.endpoints.web.base-path=/ops",
					"management.endpoints.web.path-mapping.ratelimitoverrides=overrides")
			.run((context) -> {
				RateLimitOverridesWriteMapping mapping = context.getBean(RateLimitOverridesWriteMapping.class);
				assertThat(mapping.getHandler(new MockHttpServletRequest("POST", "/ops/overrides/api/x"))).isNotNull();
				assertThat(mapping.getHandler(new MockHttpServletRequest("POST", "/actuator/ratelimitoverrides/api/x")))
					.isNull();
			});
	}

	@Test
	void leavesTheOverridesPostToTheManagementContextWhenTheActuatorHasAPortOfItsOwn() {
		String[] properties = { POLICY, "management.endpoints.web.exposure.include=ratelimitoverrides",
				"management.server.port=0" };
		// the factory of the management context, which a runner's context never starts
		new WebApplicationContextRunner().withConfiguration(this.management)
			.withConfiguration(AutoConfigurations.of(TomcatServletManagementContextAutoConfiguration.class))
			.withPropertyValues(properties)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitOverridesEndpoint.class)
				.doesNotHaveBean(RateLimitOverridesWriteMapping.class));
		new ReactiveWebApplicationContextRunner().withConfiguration(this.management)
			.withConfiguration(AutoConfigurations.of(NettyReactiveManagementContextAutoConfiguration.class))
			.withPropertyValues(properties)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitOverridesEndpoint.class)
				.doesNotHaveBean(ReactiveRateLimitOverridesWriteMapping.class));
	}

	@Test
	void servesNoOverridesPostWhenTheActuatorIsOffHttp() {
		String[] properties = { POLICY, "management.endpoints.web.exposure.include=ratelimitoverrides",
				"management.server.port=-1" };
		new WebApplicationContextRunner().withConfiguration(this.management)
			.withPropertyValues(properties)
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitOverridesWriteMapping.class));
		new ReactiveWebApplicationContextRunner().withConfiguration(this.management)
			.withPropertyValues(properties)
			.run((context) -> assertThat(context).doesNotHaveBean(ReactiveRateLimitOverridesWriteMapping.class));
	}

	@Test
	void servesNoOverridesPostWhenTheEndpointIsReadOnlyOrNotExposedOverHttp() {
		new ReactiveWebApplicationContextRunner().withConfiguration(this.management)
			// reads 'read-only' as a Boot application does
			.withInitializer((context) -> context.getEnvironment()
				.setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
			.withPropertyValues(POLICY, "management.endpoints.web.exposure.include=ratelimitoverrides",
					"management.endpoint.ratelimitoverrides.access=read-only")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitOverridesEndpoint.class)
				.doesNotHaveBean(ReactiveRateLimitOverridesWriteMapping.class));
		new ReactiveWebApplicationContextRunner().withConfiguration(this.management)
			.withPropertyValues(POLICY, "spring.jmx.enabled=true",
					"management.endpoints.jmx.exposure.include=ratelimitoverrides")
			.run((context) -> assertThat(context).doesNotHaveBean(ReactiveRateLimitOverridesWriteMapping.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnEndpointConfiguration {

		@Bean
		RateLimitsEndpoint ownEndpoint(RateLimitService service) {
			return new RateLimitsEndpoint(service, FailureMode.DENY, List::of);
		}

	}

}
