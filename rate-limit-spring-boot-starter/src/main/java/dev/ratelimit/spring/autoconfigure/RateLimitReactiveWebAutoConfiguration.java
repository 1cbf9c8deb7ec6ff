package dev.ratelimit.spring.autoconfigure;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.WebFilter;

import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.annotation.RateLimitedMethods;
import dev.ratelimit.spring.annotation.WebInvocationSupport;
import dev.ratelimit.spring.web.RateLimitHeaders;
import dev.ratelimit.spring.web.reactive.RateLimitWebFilter;
import dev.ratelimit.spring.web.reactive.ReactiveInvocationSupport;
import dev.ratelimit.spring.web.reactive.ReactiveRateLimitExceptionHandler;

/**
 * Auto-configuration of a reactive (WebFlux) application: the {@link RateLimitWebFilter}
 * that applies {@code ratelimit.filters} right after Spring Security's
 * {@code WebFilterChainProxy}, the support that lets {@code @RateLimited} methods
 * returning {@code Mono} or {@code Flux} see their exchange, and the answer to a rejected
 * call. Each backs off for a bean of the application's of the same type.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ DispatcherHandler.class, WebFilter.class })
@ConditionalOnBean(RateLimitService.class)
public final class RateLimitReactiveWebAutoConfiguration {

	/**
	 * The order of Spring Security's {@code WebFilterChainProxy} in a WebFlux application
	 * ({@code WebFluxSecurityConfiguration}).
	 */
	static final int SECURITY_WEB_FILTER_ORDER = -100;

	@Bean
	ServerForwardHeadersCheck rateLimitServerForwardHeadersCheck(Environment environment) {
		return ServerForwardHeadersCheck.checkReactive(environment);
	}

	@Bean
	@ConditionalOnMissingBean
	ReactiveRateLimitExceptionHandler rateLimitReactiveExceptionHandler(RateLimitProperties properties) {
		return new ReactiveRateLimitExceptionHandler(headers(properties));
	}

	@Bean
	@ConditionalOnMissingBean(WebInvocationSupport.class)
	ReactiveInvocationSupport rateLimitReactiveInvocationSupport(RateLimitService service,
			RateLimitProperties properties) {
		return new ReactiveInvocationSupport(service, headers(properties));
	}

	// the primary one, for an application that injects the filter by type
	@Bean
	@Primary
	@ConditionalOnMissingBean
	RateLimitWebFilter rateLimitWebFilter(RateLimitProperties properties, RateLimitService service,
			PolicyRegistry policies, ObjectProvider<RateLimitedMethods> annotatedMethods,
			ObjectProvider<RequestMappingHandlerMapping> handlerMappings, BeanFactory beanFactory) {
		return new RateLimitWebFilter(service, FilterRuleFactory.rules(properties, policies), headers(properties),
				() -> handlerMappings.orderedStream().toList(), annotatedMethods::getIfAvailable, beanFactory,
				SECURITY_WEB_FILTER_ORDER + RateLimitWebAutoConfiguration.AFTER_SECURITY, false);
	}

	// After the filter above, which backs off for an application's own: this one stays,
	// to settle each exchange once Spring Security has answered it.
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitBeforeSecurityWebFilter")
	RateLimitWebFilter rateLimitBeforeSecurityWebFilter(RateLimitProperties properties, RateLimitService service,
			PolicyRegistry policies, ObjectProvider<RateLimitedMethods> annotatedMethods,
			ObjectProvider<RequestMappingHandlerMapping> handlerMappings, BeanFactory beanFactory) {
		return new RateLimitWebFilter(service, FilterRuleFactory.rules(properties, policies, false),
				headers(properties), () -> handlerMappings.orderedStream().toList(), annotatedMethods::getIfAvailable,
				beanFactory, SECURITY_WEB_FILTER_ORDER - RateLimitWebAutoConfiguration.BEFORE_SECURITY, true);
	}

	/**
	 * The headers' writer: not a bean, since its servlet method would make a bean factory
	 * without the servlet API fail to introspect it.
	 */
	private static RateLimitHeaders headers(RateLimitProperties properties) {
		return new RateLimitHeaders(properties.getHeaders().isEnabled(), properties.getHeaders().isLegacy());
	}

}
