package dev.ratelimit.spring.autoconfigure;

import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import jakarta.servlet.DispatcherType;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingFilterBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.handler.HandlerMappingIntrospector;

import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.Sleeper;
import dev.ratelimit.spring.annotation.RateLimitedMethods;
import dev.ratelimit.spring.annotation.WebInvocationSupport;
import dev.ratelimit.spring.web.FilterRule;
import dev.ratelimit.spring.web.PendingLimitsExceptionResolver;
import dev.ratelimit.spring.web.RateLimitExceptionHandler;
import dev.ratelimit.spring.web.RateLimitFilter;
import dev.ratelimit.spring.web.RateLimitHeaders;
import dev.ratelimit.spring.web.ServletInvocationSupport;

/**
 * Auto-configuration of rate limiting in a servlet web application: the filters for
 * {@code ratelimit.filters}, one right after Spring Security's filter chain and one right
 * before it (for the rules marked {@code before-security}, and to settle each request
 * once Spring Security has answered it), the rate-limit headers and the 429, 503 and 400
 * problem responses, and a start-up check that the web server lets no client choose its
 * address.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBean(RateLimitService.class)
public final class RateLimitWebAutoConfiguration {

	/**
	 * The order of Spring Security's filter chain unless
	 * {@code spring.security.filter.order} changes it.
	 */
	static final int SECURITY_FILTER_ORDER = -100;

	/**
	 * How far after Spring Security's filter chain the rate-limit filter runs.
	 */
	static final int AFTER_SECURITY = 10;

	/**
	 * How far before Spring Security's filter chain the filter of the rules marked
	 * {@code before-security} runs: after Spring's request context filter.
	 */
	static final int BEFORE_SECURITY = 1;

	private static final String EXCEPTION_RESOLVER = "handlerExceptionResolver";

	@Bean
	ServerForwardHeadersCheck rateLimitServerForwardHeadersCheck(Environment environment,
			ListableBeanFactory beanFactory, RateLimitProperties properties) {
		return ServerForwardHeadersCheck.check(environment, beanFactory, getClass().getClassLoader(),
				properties.getClient().isRequireInternalProxies());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitHeaders rateLimitHeaders(RateLimitProperties properties) {
		return new RateLimitHeaders(properties.getHeaders().isEnabled(), properties.getHeaders().isLegacy());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitExceptionHandler rateLimitExceptionHandler(RateLimitHeaders headers) {
		return new RateLimitExceptionHandler(headers);
	}

	@Bean
	@ConditionalOnMissingBean
	WebInvocationSupport rateLimitWebInvocationSupport(RateLimitService service, RateLimitHeaders headers) {
		return new ServletInvocationSupport(service, headers);
	}

	@Bean
	@ConditionalOnMissingBean
	PendingLimitsExceptionResolver rateLimitPendingLimitsExceptionResolver() {
		return new PendingLimitsExceptionResolver();
	}

	@Bean
	@ConditionalOnMissingFilterBean(RateLimitFilter.class)
	FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimitProperties properties, RateLimitService service,
			PolicyRegistry policies, RateLimitHeaders headers, Sleeper sleeper,
			ObjectProvider<RateLimitedMethods> annotatedMethods,
			ObjectProvider<HandlerMappingIntrospector> introspector, BeanFactory beanFactory, Environment environment) {
		return registration("rateLimitFilter", false, properties, service, policies, headers, sleeper, annotatedMethods,
				introspector, beanFactory, environment);
	}

	// After the filter above, which backs off for an application's own: this one stays,
	// to settle each request once Spring Security has answered it.
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitBeforeSecurityFilter")
	FilterRegistrationBean<RateLimitFilter> rateLimitBeforeSecurityFilter(RateLimitProperties properties,
			RateLimitService service, PolicyRegistry policies, RateLimitHeaders headers, Sleeper sleeper,
			ObjectProvider<RateLimitedMethods> annotatedMethods,
			ObjectProvider<HandlerMappingIntrospector> introspector, BeanFactory beanFactory, Environment environment) {
		return registration("rateLimitBeforeSecurityFilter", true, properties, service, policies, headers, sleeper,
				annotatedMethods, introspector, beanFactory, environment);
	}

	private static FilterRegistrationBean<RateLimitFilter> registration(String name, boolean beforeSecurity,
			RateLimitProperties properties, RateLimitService service, PolicyRegistry policies, RateLimitHeaders headers,
			Sleeper sleeper, ObjectProvider<RateLimitedMethods> annotatedMethods,
			ObjectProvider<HandlerMappingIntrospector> introspector, BeanFactory beanFactory, Environment environment) {
		List<FilterRule> rules = FilterRuleFactory.rules(properties, policies, !beforeSecurity);
		Supplier<Optional<HandlerMappingIntrospector>> mappings = SingletonSupplier
			.of(() -> Optional.ofNullable(introspector.getIfAvailable()));
		Supplier<Optional<HandlerExceptionResolver>> resolver = SingletonSupplier
			.of(() -> beanFactory.containsBean(EXCEPTION_RESOLVER)
					? Optional.of(beanFactory.getBean(EXCEPTION_RESOLVER, HandlerExceptionResolver.class))
					: Optional.empty());
		RateLimitFilter filter = new RateLimitFilter(service, rules, headers, sleeper, annotatedMethods::getIfAvailable,
				() -> mappings.get().map(HandlerMappingIntrospector::getHandlerMappings).orElse(List.of()),
				() -> resolver.get().orElse(null), beanFactory, beforeSecurity);
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName(name);
		registration.setDispatcherTypes(DispatcherType.REQUEST);
		int security = environment.getProperty("spring.security.filter.order", Integer.class, SECURITY_FILTER_ORDER);
		registration.setOrder(beforeSecurity ? security - BEFORE_SECURITY : security + AFTER_SECURITY);
		return registration;
	}

}
