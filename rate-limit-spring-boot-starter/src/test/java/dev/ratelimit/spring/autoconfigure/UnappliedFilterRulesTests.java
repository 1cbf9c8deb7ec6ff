package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.servlet.DispatcherServlet;

import dev.ratelimit.spring.web.reactive.RateLimitWebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.filters} in an application where no rate-limit filter applies them: a
 * reactive web application without WebFlux fails to start, naming the property; any other
 * is warned; a servlet application with Spring MVC and a reactive one with WebFlux apply
 * them.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnappliedFilterRulesTests {

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitWebAutoConfiguration.class);

	private static final String[] ONE_RULE = { "ratelimit.policies.api.limits[0].rate=5/1s",
			"ratelimit.filters[0].patterns=/api/**", "ratelimit.filters[0].policies=api" };

	@Test
	void failsStartUpOfAReactiveWebApplicationWithoutWebFlux() {
		new ReactiveWebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
			.withPropertyValues(ONE_RULE)
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters",
					"has 1 rule, but this is a reactive web application, where they would never apply: the"
							+ " rate-limit filter that applies them needs a servlet web application with Spring MVC,"
							+ " or a reactive one with Spring WebFlux"));
	}

	@Test
	void appliesTheRulesOfAWebFluxApplication() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitReactiveWebAutoConfiguration.class))
			.withPropertyValues(ONE_RULE)
			.run((context) -> assertThat(context).hasNotFailed()
				.hasBean("rateLimitWebFilter")
				.doesNotHaveBean(UnappliedFilterRules.class));
	}

	@Test
	void startsAReactiveWebApplicationWithoutFilterRules() {
		new ReactiveWebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void warnsAnApplicationThatIsNotAWebApplication(CapturedOutput output) {
		new ApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues(ONE_RULE)
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("ratelimit.filters has 1 rule, which this application does not apply: it is not"
				+ " a web application, and the rate-limit filter that applies them needs a servlet web application"
				+ " with Spring MVC, or a reactive one with Spring WebFlux");
	}

	@Test
	void warnsAServletApplicationWithoutSpringMvc(CapturedOutput output) {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withClassLoader(new FilteredClassLoader(DispatcherServlet.class))
			.withPropertyValues(ONE_RULE)
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(FilterRegistrationBean.class));
		assertThat(output).contains("ratelimit.filters has 1 rule, which this application does not apply: it is a"
				+ " servlet web application without Spring MVC");
	}

	@Test
	void saysNothingWhereTheFilterAppliesTheRules(CapturedOutput output) {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues(ONE_RULE)
			.run((context) -> assertThat(context).hasNotFailed()
				.hasBean("rateLimitFilter")
				.doesNotHaveBean(UnappliedFilterRules.class));
		assertThat(output).doesNotContain("ratelimit.filters has");
	}

}
