package dev.ratelimit.spring.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.type.AnnotationMetadata;

import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.Sleeper;
import dev.ratelimit.spring.annotation.RateLimitedAdvisor;
import dev.ratelimit.spring.annotation.RateLimitedInterceptor;
import dev.ratelimit.spring.annotation.RateLimitedMethods;
import dev.ratelimit.spring.annotation.WebInvocationSupport;
import dev.ratelimit.spring.key.KeyResolverFactory;

/**
 * Auto-configuration of {@code @RateLimited}: an infrastructure advisor (like
 * {@code @Transactional}'s), so it needs no AspectJ, and a start-up check of every
 * annotated bean method.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.boot.autoconfigure.aop.AopAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimitService.class)
@Import(RateLimitAnnotationAutoConfiguration.AutoProxyRegistrar.class)
public final class RateLimitAnnotationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitedMethods rateLimitedMethods(PolicyRegistry policies, KeyResolverFactory keyResolvers,
			ConfigurableListableBeanFactory beanFactory) {
		return new RateLimitedMethods(policies, keyResolvers, beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitedInterceptor rateLimitedInterceptor(RateLimitService service, RateLimitedMethods methods, Sleeper sleeper,
			ObjectProvider<WebInvocationSupport> web, BeanFactory beanFactory) {
		return new RateLimitedInterceptor(service, methods, sleeper, web.getIfAvailable(), beanFactory);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static RateLimitedAdvisor rateLimitedAdvisor(ObjectProvider<RateLimitedInterceptor> interceptor) {
		return new RateLimitedAdvisor(interceptor);
	}

	/**
	 * Makes sure an auto-proxy creator exists, as {@code @EnableTransactionManagement}
	 * does, also when {@code spring.aop.auto=false}.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
