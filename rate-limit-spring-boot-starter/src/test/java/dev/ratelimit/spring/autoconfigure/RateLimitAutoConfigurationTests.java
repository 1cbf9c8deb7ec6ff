package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.mockito.Mockito;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.UrlResource;
import org.springframework.core.io.support.PropertiesLoaderUtils;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.TierResolver;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.annotation.RateLimitedAdvisor;
import dev.ratelimit.spring.key.AuthorityTierResolver;
import dev.ratelimit.spring.key.ClientAddressResolver;
import dev.ratelimit.spring.key.RequestAttributeTierResolver;
import dev.ratelimit.spring.testsupport.CountingRateLimiter;
import dev.ratelimit.spring.web.RateLimitExceptionHandler;
import dev.ratelimit.spring.web.RateLimitFilter;
import dev.ratelimit.spring.web.RateLimitHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The auto-configurations in isolation: what they create, when they back off, and what
 * they need on the class path.
 */
class RateLimitAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class, AopAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=2/1m",
				"ratelimit.policies.other.limits[0].rate=5/1m");

	private final WebApplicationContextRunner webRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=2/1m", "ratelimit.filters[0].patterns=/api/**",
				"ratelimit.filters[0].policies=api");

	@Test
	void createsTheServiceTheInMemoryBackendAndTheAnnotationSupportByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitService.class)
				.hasSingleBean(InMemoryRateLimiter.class)
				.hasSingleBean(PolicyRegistry.class)
				.hasSingleBean(RateLimitedAdvisor.class);
			assertThat(context.getBean(PolicyRegistry.class).names()).containsExactly("api", "other");
			assertThat(context.getBean(PolicyRegistry.class).defaultTier()).isEqualTo("free");
		});
	}

	@Test
	void keysIpv6ClientsByTheirSlash64UnlessAnotherPrefixLengthIsConfigured() {
		this.runner.run((context) -> {
			ClientAddressResolver addresses = context.getBean(ClientAddressResolver.class);
			assertThat(addresses.ipv6PrefixLength()).isEqualTo(64);
			assertThat(addresses.storedKey("2001:db8:1:2::9")).isEqualTo("ip:2001:db8:1:2:0:0:0:0/64");
			assertThat(addresses.storedKey("::ffff:203.0.113.7")).isEqualTo("ip:203.0.113.7");
		});
		this.runner.withPropertyValues("ratelimit.client.ipv6-prefix-length=128")
			.run((context) -> assertThat(context.getBean(ClientAddressResolver.class).storedKey("2001:db8:1:2::9"))
				.isEqualTo("ip:2001:db8:1:2:0:0:0:9"));
	}

	@Test
	void createsTheFiltersHeadersAndProblemHandlerInAServletApplication() {
		this.webRunner.run((context) -> {
			assertThat(context.getBeansOfType(FilterRegistrationBean.class)).containsOnlyKeys("rateLimitFilter",
					"rateLimitBeforeSecurityFilter");
			assertThat(context).hasSingleBean(RateLimitHeaders.class).hasSingleBean(RateLimitExceptionHandler.class);
			RateLimitFilter after = filter(context, "rateLimitFilter");
			assertThat(after.isBeforeSecurity()).isFalse();
			assertThat(after.getRules()).hasSize(1);
			RateLimitFilter before = filter(context, "rateLimitBeforeSecurityFilter");
			assertThat(before.isBeforeSecurity()).isTrue();
			assertThat(before.getRules()).isEmpty();
		});
	}

	@Test
	void ordersOneFilterRightAfterSpringSecuritysFilterChainAndOneRightBefore() {
		this.webRunner.run((context) -> {
			assertThat(registration(context, "rateLimitFilter").getOrder()).isEqualTo(-100 + 10);
			assertThat(registration(context, "rateLimitBeforeSecurityFilter").getOrder()).isEqualTo(-100 - 1);
		});
		this.webRunner.withPropertyValues("spring.security.filter.order=0").run((context) -> {
			assertThat(registration(context, "rateLimitFilter").getOrder()).isEqualTo(10);
			assertThat(registration(context, "rateLimitBeforeSecurityFilter").getOrder()).isEqualTo(-1);
		});
	}

	@Test
	void givesEachFilterTheRulesOfItsStage() {
		this.webRunner
			.withPropertyValues("ratelimit.policies.by-address.key=ip",
					"ratelimit.policies.by-address.limits[0].rate=5/1s", "ratelimit.filters[1].patterns=/**",
					"ratelimit.filters[1].before-security=true", "ratelimit.filters[1].policies=by-address")
			.run((context) -> {
				assertThat(filter(context, "rateLimitFilter").getRules()).singleElement()
					.satisfies((rule) -> assertThat(rule.beforeSecurity()).isFalse());
				assertThat(filter(context, "rateLimitBeforeSecurityFilter").getRules()).singleElement()
					.satisfies((rule) -> assertThat(rule.beforeSecurity()).isTrue());
			});
	}

	private static FilterRegistrationBean<?> registration(AssertableWebApplicationContext context, String name) {
		return context.getBean(name, FilterRegistrationBean.class);
	}

	private static RateLimitFilter filter(AssertableWebApplicationContext context, String name) {
		return (RateLimitFilter) registration(context, name).getFilter();
	}

	@Test
	void createsNoWebBeansOutsideAWebApplication() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitWebAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitService.class)
				.doesNotHaveBean(FilterRegistrationBean.class)
				.doesNotHaveBean(RateLimitHeaders.class));
	}

	@Test
	void backsOffForUserBeans() {
		RateLimiter userLimiter = InMemoryRateLimiter.builder().build();
		TierResolver userTiers = (context) -> "gold";
		RateLimitHeaders userHeaders = new RateLimitHeaders(false, false);
		this.webRunner.withBean(RateLimiter.class, () -> userLimiter)
			.withBean(TierResolver.class, () -> userTiers)
			.withBean(RateLimitHeaders.class, () -> userHeaders)
			.run((context) -> {
				assertThat(context).getBean(RateLimiter.class).isSameAs(userLimiter);
				assertThat(context).getBean(TierResolver.class).isSameAs(userTiers);
				assertThat(context).getBean(RateLimitHeaders.class).isSameAs(userHeaders);
				assertThat(context.getBean(RateLimitService.class).limiter()).isSameAs(userLimiter);
			});
	}

	@Test
	void backsOffForAUserFilterRegistration() {
		this.webRunner.withUserConfiguration(UserFilterConfiguration.class)
			// the filter before Spring Security stays, to settle each request once
			// Security has answered it
			.run((context) -> assertThat(context.getBeansOfType(FilterRegistrationBean.class))
				.containsOnlyKeys("myFilter", "rateLimitBeforeSecurityFilter"));
	}

	@Test
	void turnsEverythingOffWhenDisabled() {
		this.webRunner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitService.class)
				.doesNotHaveBean(RateLimiter.class)
				.doesNotHaveBean(FilterRegistrationBean.class)
				.doesNotHaveBean(RateLimitedAdvisor.class)
				.doesNotHaveBean(RateLimitHeaders.class));
	}

	@Test
	void readsTierAuthoritiesWhenSpringSecurityIsPresent() {
		this.runner.run(
				(context) -> assertThat(context.getBean(TierResolver.class)).isInstanceOf(AuthorityTierResolver.class));
	}

	@Test
	void worksWithoutSpringSecurity() {
		this.webRunner.withClassLoader(new FilteredClassLoader("org.springframework.security")).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBeansOfType(FilterRegistrationBean.class)).hasSize(2);
			assertThat(context.getBean(TierResolver.class)).isExactlyInstanceOf(RequestAttributeTierResolver.class);
		});
	}

	@Test
	void worksWithoutRedisOnTheClassPath() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimiter.class));
	}

	@Test
	void failsStartUpWhenTheRedisBackendHasNoRedis() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.withPropertyValues("ratelimit.backend=redis")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.backend",
					"no RedisConnectionFactory"));
	}

	@Test
	void enforcesAnnotationsWithoutAspectJOutsideAWebRequest() {
		this.runner.withClassLoader(new FilteredClassLoader("org.aspectj"))
			.withBean(GreetingService.class)
			.run((context) -> {
				GreetingService service = context.getBean(GreetingService.class);
				assertThat(AopUtils.isAopProxy(service)).isTrue();
				service.greet("a");
				service.greet("b");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.greet("c"))
					.satisfies((ex) -> assertThat(ex.getDecision().rejectedBy()).singleElement()
						.satisfies((status) -> assertThat(status.target().policy()).isEqualTo("api")));
			});
	}

	@Test
	void enforcesAnnotationsWithAspectJ() {
		this.runner.withBean(GreetingService.class).run((context) -> {
			GreetingService service = context.getBean(GreetingService.class);
			service.greet("a");
			service.greet("a");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.greet("a"));
		});
	}

	@Test
	void keysAnAnnotatedMethodWithSpelOverMethodArgumentsByName() {
		this.runner.withBean(GreetingService.class).run((context) -> {
			GreetingService service = context.getBean(GreetingService.class);
			service.perUser("alice");
			service.perUser("alice");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.perUser("alice"));
			service.perUser("bob");
		});
	}

	@Test
	void limitsEveryPublicMethodOfAnAnnotatedClass() {
		this.runner.withBean(ClassLevelService.class).run((context) -> {
			ClassLevelService service = context.getBean(ClassLevelService.class);
			service.first();
			service.second();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(service::first);
		});
	}

	@Test
	void honoursRateLimitedAsAMetaAnnotation() {
		this.runner.withBean(GreetingService.class).run((context) -> {
			GreetingService service = context.getBean(GreetingService.class);
			service.meta();
			service.meta();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(service::meta);
		});
	}

	@Test
	void decidesRepeatedAnnotationsTogetherInOneCall() {
		CountingRateLimiter counting = new CountingRateLimiter(InMemoryRateLimiter.builder().build());
		this.runner.withBean(GreetingService.class).withBean(RateLimiter.class, () -> counting).run((context) -> {
			context.getBean(GreetingService.class).both();
			assertThat(counting.acquires()).isOne();
			assertThat(counting.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("api", "other");
		});
	}

	@Test
	void registersTheFailureAnalyzer() throws IOException {
		List<String> analyzers = new ArrayList<>();
		for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring.factories"))) {
			Properties factories = PropertiesLoaderUtils.loadProperties(new UrlResource(url));
			analyzers.add(factories.getProperty(FailureAnalyzer.class.getName(), ""));
		}
		assertThat(analyzers)
			.anySatisfy((names) -> assertThat(names).contains(RateLimitConfigurationFailureAnalyzer.class.getName()));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserFilterConfiguration {

		@Bean
		FilterRegistrationBean<RateLimitFilter> myFilter() {
			return new FilterRegistrationBean<>(Mockito.mock(RateLimitFilter.class));
		}

	}

	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.METHOD)
	@RateLimited("api")
	@interface ApiLimited {

	}

	public static class GreetingService {

		@RateLimited("api")
		public String greet(String name) {
			return "hello " + name;
		}

		@RateLimited(policy = "api", key = "#{#name}")
		public String perUser(String name) {
			return "hello " + name;
		}

		@ApiLimited
		public String meta() {
			return "meta";
		}

		@RateLimited("api")
		@RateLimited("other")
		public String both() {
			return "both";
		}

	}

	@RateLimited("api")
	public static class ClassLevelService {

		public String first() {
			return "first";
		}

		public String second() {
			return "second";
		}

	}

}
