package dev.ratelimit.spring.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Objects;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.ReactiveAdapter;
import org.springframework.util.ClassUtils;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.Sleeper;

/**
 * The aspect behind {@link RateLimited}: decides each call before the method runs, with
 * the filters' policies for a request's handler, and throws
 * {@link RateLimitExceededException} when a limit rejects it; charges {@code count-if}
 * policies once the web request's response is known, or outside a web request once the
 * method returns or throws; a cost or key that cannot be evaluated throws
 * {@link RateLimitEvaluationException} (400) in a request, else an
 * {@link IllegalStateException}.
 */
public final class RateLimitedInterceptor implements MethodInterceptor {

	private static final String REACTOR = "reactor.core.publisher.Mono";

	private final RateLimitService service;

	private final RateLimitedMethods methods;

	private final Sleeper sleeper;

	private final @Nullable WebInvocationSupport web;

	private final @Nullable BeanFactory beanFactory;

	/** Methods returning a reactive type, when Project Reactor is present. */
	private final @Nullable ReactiveCalls reactive;

	/**
	 * Creates the interceptor.
	 * @param service the decision path
	 * @param methods the resolved annotations
	 * @param sleeper what waits out shaping delays
	 * @param web the connection to web requests, or {@code null} outside a web
	 * application
	 * @param beanFactory the bean factory that {@code @beans} in expressions refer to
	 */
	public RateLimitedInterceptor(RateLimitService service, RateLimitedMethods methods, Sleeper sleeper,
			@Nullable WebInvocationSupport web, @Nullable BeanFactory beanFactory) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.methods = Objects.requireNonNull(methods, "methods must not be null");
		this.sleeper = Objects.requireNonNull(sleeper, "sleeper must not be null");
		this.web = web;
		this.beanFactory = beanFactory;
		this.reactive = ClassUtils.isPresent(REACTOR, RateLimitedInterceptor.class.getClassLoader())
				? new ReactiveCalls(service, web, beanFactory) : null;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
		MethodLimits limits = this.methods.find(method, targetClass);
		if (limits == null) {
			return invocation.proceed();
		}
		ReactiveCalls reactive = this.reactive;
		ReactiveAdapter adapter = (reactive != null) ? reactive.adapterOf(method) : null;
		if (adapter != null) {
			// decided on subscription, without blocking
			return Objects.requireNonNull(reactive).invoke(invocation, method, limits, adapter);
		}
		WebInvocationSupport web = this.web;
		RateLimitRequest request = (web != null) ? web.currentRequest() : null;
		boolean handler = web != null && request != null && web.isHandler(request, method);
		if (handler) {
			// taken before any expression is evaluated: the method is invoked, so the
			// filter must not charge its policies after the fact, whether this decision
			// is made or an expression cannot be evaluated and nothing is charged; given
			// back only if the decision fails for the application's own reasons
			web.takePending(request);
		}
		RateLimitResult result;
		try {
			result = decide(invocation, method, limits, request, handler);
		}
		catch (RateLimitEvaluationException ex) {
			if (!handler) {
				// the arguments of a method other than the request's handler come from
				// the application, not the client;
				// kept out of the causes, which Spring MVC matches exception handlers
				// against, so that the client's 400
				// is not chosen before the application's own advice
				throw notTheClients(ex);
			}
			throw ex;
		}
		catch (RuntimeException | Error ex) {
			if (handler) {
				// the application failed, not the request: as for a handler method that
				// never runs, the filter decides its policies when the failure reaches
				// the exception resolvers, else when the filter chain returns
				web.restorePending(request);
			}
			throw ex;
		}
		// A handler method's concurrency permits are held until the response completes.
		// Otherwise, and for a handler
		// method invoked after the response completed (an ERROR dispatch, say), until the
		// method returns or throws.
		boolean releasedByWeb = web != null && request != null && web.onDecision(request, result, handler);
		if (!result.isAllowed()) {
			throw new RateLimitExceededException(result.decision());
		}
		// a count-if charge waits for the response of the web request, else for the
		// method to return or throw, with no response to read
		boolean chargedByWeb = result.chargesAfterResponse() && web != null && request != null
				&& web.holdCharge(request, result);
		try {
			Duration delay = result.delay();
			if (!delay.isZero()) {
				this.sleeper.sleep(delay);
			}
			return invocation.proceed();
		}
		finally {
			if (result.chargesAfterResponse() && !chargedByWeb) {
				this.service.chargeAfterResponse(result, null);
			}
			if (!releasedByWeb) {
				this.service.release(result);
			}
		}
	}

	private RateLimitResult decide(MethodInvocation invocation, Method method, MethodLimits limits,
			@Nullable RateLimitRequest request, boolean handler) {
		RateLimitContext context = RateLimitContext.forInvocation(request, method, invocation.getArguments(),
				limits.parameterNamesShared(), this.beanFactory);
		MethodLimits.Charge charge = limits.charge(context);
		WebInvocationSupport web = this.web;
		if (handler && web != null && request != null) {
			return web.decideWithPending(request, charge.policies(), charge.cost(), charge.shadowCost(), context);
		}
		return this.service.decideApplied(charge.policies(), charge.cost(), charge.shadowCost(), context);
	}

	/**
	 * Returns the failure of a method's cost or key that is not the request's handler:
	 * its arguments come from the application, not the client. Kept out of the causes,
	 * which Spring MVC matches exception handlers against, so that the client's 400 is
	 * not chosen before the application's own advice.
	 */
	static IllegalStateException notTheClients(RateLimitEvaluationException ex) {
		IllegalStateException failure = new IllegalStateException(ex.getMessage(), ex.getCause());
		failure.addSuppressed(ex);
		return failure;
	}

}
