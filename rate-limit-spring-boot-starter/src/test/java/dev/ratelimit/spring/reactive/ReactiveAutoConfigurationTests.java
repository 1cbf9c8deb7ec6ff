package dev.ratelimit.spring.reactive;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.annotation.WebInvocationSupport;
import dev.ratelimit.spring.autoconfigure.ConfigurationFailures;
import dev.ratelimit.spring.autoconfigure.RateLimitAnnotationAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitEndpointAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitHealthAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitMetricsAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitReactiveWebAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitRedisAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitWebAutoConfiguration;
import dev.ratelimit.spring.testsupport.StarterClassLoader;
import dev.ratelimit.spring.web.RateLimitExceptionHandler;
import dev.ratelimit.spring.web.RateLimitFilter;
import dev.ratelimit.spring.web.RateLimitHeaders;
import dev.ratelimit.spring.web.ServletInvocationSupport;
import dev.ratelimit.spring.web.reactive.RateLimitWebFilter;
import dev.ratelimit.spring.web.reactive.ReactiveInvocationSupport;
import dev.ratelimit.spring.web.reactive.ReactiveRateLimitExceptionHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * The auto-configurations of either web stack in isolation: the reactive pieces appear
 * only in a reactive application and the servlet ones only in a servlet application, each
 * backs off for the application's own bean, and a reactive application without the
 * servlet API on its class path starts and limits requests.
 */
class ReactiveAutoConfigurationTests {

	private static final String[] SERVLET_API = { "jakarta.servlet.", "org.springframework.web.servlet." };

	private static final AutoConfigurations ALL = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitWebAutoConfiguration.class, RateLimitReactiveWebAutoConfiguration.class,
			RateLimitAnnotationAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class,
			RateLimitEndpointAutoConfiguration.class, RateLimitHealthAutoConfiguration.class,
			RateLimitRedisAutoConfiguration.class, AopAutoConfiguration.class);

	private static final String[] PROPERTIES = { "ratelimit.policies.api.limits[0].rate=2/1m",
			"ratelimit.filters[0].patterns=/api/**", "ratelimit.filters[0].policies=api" };

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(ALL)
		.withPropertyValues(PROPERTIES);

	private final WebApplicationContextRunner servlet = new WebApplicationContextRunner().withConfiguration(ALL)
		.withPropertyValues(PROPERTIES);

	@Test
	void createsTheReactivePiecesInAReactiveApplicationOnly() {
		this.reactive.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(ReactiveRateLimitExceptionHandler.class)
				.hasSingleBean(ReactiveInvocationSupport.class)
				.doesNotHaveBean(FilterRegistrationBean.class)
				.doesNotHaveBean(RateLimitExceptionHandler.class)
				.doesNotHaveBean(ServletInvocationSupport.class);
			assertThat(context.getBeansOfType(RateLimitWebFilter.class)).containsOnlyKeys("rateLimitWebFilter",
					"rateLimitBeforeSecurityWebFilter");
			RateLimitWebFilter after = context.getBean("rateLimitWebFilter", RateLimitWebFilter.class);
			assertThat(after.getRules()).hasSize(1);
			// right after Spring Security's WebFilterChainProxy (order -100)
			assertThat(after.getOrder()).isEqualTo(-90);
			RateLimitWebFilter before = context.getBean("rateLimitBeforeSecurityWebFilter", RateLimitWebFilter.class);
			assertThat(before.getRules()).isEmpty();
			// right before it, to settle each exchange once Security has answered it
			assertThat(before.getOrder()).isEqualTo(-101);
		});
	}

	@Test
	void createsTheServletPiecesInAServletApplicationOnly() {
		this.servlet.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasBean("rateLimitFilter")
				.hasSingleBean(RateLimitExceptionHandler.class)
				.hasSingleBean(ServletInvocationSupport.class)
				.doesNotHaveBean(RateLimitWebFilter.class)
				.doesNotHaveBean(ReactiveRateLimitExceptionHandler.class)
				.doesNotHaveBean(ReactiveInvocationSupport.class);
			assertThat(context.getBean("rateLimitFilter", FilterRegistrationBean.class).getFilter())
				.isInstanceOf(RateLimitFilter.class);
		});
	}

	@Test
	void backsOffForTheApplicationsOwnBeans() {
		this.reactive.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasNotFailed();
			// the filter before Spring Security stays, to settle each exchange once
			// Security has answered it
			assertThat(context.getBeansOfType(RateLimitWebFilter.class)).containsOnlyKeys("myFilter",
					"rateLimitBeforeSecurityWebFilter");
			assertThat(context.getBeansOfType(ReactiveRateLimitExceptionHandler.class)).containsOnlyKeys("myHandler");
			assertThat(context.getBeansOfType(WebInvocationSupport.class)).containsOnlyKeys("mySupport");
		});
	}

	@Test
	void refusesAServerThatReplacesTheClientAddressBeforeTheLimiterSeesIt() {
		for (String strategy : new String[] { "native", "framework" }) {
			this.reactive.withPropertyValues("server.forward-headers-strategy=" + strategy)
				.run((context) -> ConfigurationFailures.assertFailure(context, "server.forward-headers-strategy",
						"so a client could choose its own 'ip' key. Set server.forward-headers-strategy=none and list"
								+ " your proxies in ratelimit.client.trusted-proxies"));
		}
		this.reactive.withPropertyValues("server.forward-headers-strategy=none")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void createsNothingWhenDisabled() {
		this.reactive.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitService.class)
				.doesNotHaveBean(RateLimitWebFilter.class));
	}

	@Test
	void startsAndLimitsAReactiveApplicationWithoutTheServletApi() throws Exception {
		assertThat(StarterClassLoader.run(new FilteredClassLoader(SERVLET_API), ServletFreeScenario.class))
			.containsExactly(200, 200, 429);
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		RateLimitWebFilter myFilter(RateLimitService service) {
			return new RateLimitWebFilter(service, List.of(), new RateLimitHeaders(true, false), List::of, () -> null,
					null, 0);
		}

		@Bean
		ReactiveRateLimitExceptionHandler myHandler() {
			return new ReactiveRateLimitExceptionHandler(new RateLimitHeaders(true, false));
		}

		@Bean
		WebInvocationSupport mySupport() {
			return mock(WebInvocationSupport.class);
		}

	}

	/**
	 * Starts a reactive application with the servlet API hidden and sends three requests
	 * through its filter; run in a {@link StarterClassLoader}.
	 */
	public static final class ServletFreeScenario implements Callable<List<Integer>> {

		@Override
		public List<Integer> call() {
			List<Integer> statuses = new ArrayList<>();
			new ReactiveWebApplicationContextRunner().withClassLoader(getClass().getClassLoader())
				.withConfiguration(ALL)
				.withPropertyValues(PROPERTIES)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					RateLimitWebFilter filter = context.getBean("rateLimitWebFilter", RateLimitWebFilter.class);
					for (int i = 0; i < 3; i++) {
						MockServerWebExchange exchange = MockServerWebExchange
							.from(MockServerHttpRequest.get("/api/orders")
								.remoteAddress(new InetSocketAddress("192.0.2.1", 4000)));
						filter.filter(exchange, (passed) -> Mono.empty()).block(Duration.ofSeconds(5));
						HttpStatusCode status = exchange.getResponse().getStatusCode();
						statuses.add((status != null) ? status.value() : 200);
					}
				});
			return statuses;
		}

	}

}
