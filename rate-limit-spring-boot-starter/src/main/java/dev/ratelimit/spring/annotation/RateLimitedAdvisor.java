package dev.ratelimit.spring.annotation;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Applies the {@link RateLimitedInterceptor} to every method that carries
 * {@link RateLimited}. An infrastructure advisor, like the ones behind
 * {@code @Transactional} and {@code @Async}, so it works with or without AspectJ on the
 * class path. The interceptor is looked up on first use, so that creating the advisor
 * early (as auto-proxying does) creates none of the rate limiter's beans early.
 */
public final class RateLimitedAdvisor extends AbstractPointcutAdvisor {

	/**
	 * The order of the advisor: after Spring Security's method authorization (orders up
	 * to 600), so that calls it refuses spend nothing, and before transactions (lowest
	 * precedence), so that a rejected call opens none.
	 */
	public static final int ORDER = 1000;

	private static final long serialVersionUID = 1L;

	private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return RateLimitedMethods.isAnnotated(method, targetClass);
		}

	};

	private final transient Advice advice;

	/**
	 * Creates the advisor.
	 * @param interceptor the interceptor, looked up on the first call of an annotated
	 * method
	 */
	public RateLimitedAdvisor(ObjectProvider<RateLimitedInterceptor> interceptor) {
		setOrder(ORDER);
		this.advice = new MethodInterceptor() {

			private volatile @Nullable RateLimitedInterceptor delegate;

			@Override
			public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
				RateLimitedInterceptor target = this.delegate;
				if (target == null) {
					target = interceptor.getObject();
					this.delegate = target;
				}
				return target.invoke(invocation);
			}

		};
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.advice;
	}

}
