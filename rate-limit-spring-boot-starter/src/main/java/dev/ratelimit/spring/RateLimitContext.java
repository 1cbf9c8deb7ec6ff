package dev.ratelimit.spring;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;

/**
 * The call being limited: the web request if there is one, and for an annotated method
 * its arguments. Key and tier resolvers and SpEL expressions read it. Created per call;
 * not thread-safe.
 */
public final class RateLimitContext {

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder", RateLimitContext.class.getClassLoader());

	private static final Object[] NO_ARGUMENTS = {};

	private static final String[] NO_NAMES = {};

	private final @Nullable RateLimitRequest request;

	private final @Nullable Method method;

	private final @Nullable Object[] arguments;

	private final String[] parameterNames;

	private final @Nullable BeanFactory beanFactory;

	private @Nullable EvaluationContext evaluationContext;

	private boolean responded;

	private @Nullable RateLimitResponse response;

	/**
	 * Whether {@link #principal} is the one read at the decision, kept for later reads.
	 */
	private volatile boolean principalKept;

	private volatile @Nullable Principal keptPrincipal;

	private RateLimitContext(@Nullable RateLimitRequest request, @Nullable Method method, @Nullable Object[] arguments,
			String[] parameterNames, @Nullable BeanFactory beanFactory) {
		this.request = request;
		this.method = method;
		this.arguments = arguments;
		this.parameterNames = parameterNames;
		this.beanFactory = beanFactory;
	}

	/**
	 * Returns the context of a web request that a filter limits.
	 * @param request the request
	 * @param beanFactory the bean factory that {@code @beans} in expressions refer to, if
	 * any
	 * @return the context
	 */
	public static RateLimitContext forRequest(RateLimitRequest request, @Nullable BeanFactory beanFactory) {
		return new RateLimitContext(Objects.requireNonNull(request, "request must not be null"), null, NO_ARGUMENTS,
				NO_NAMES, beanFactory);
	}

	/**
	 * Returns the context of a method invocation.
	 * @param request the web request the invocation runs in, if any
	 * @param method the invoked method
	 * @param arguments the arguments
	 * @param parameterNames the parameter names, as many as arguments (a missing name is
	 * {@code null})
	 * @param beanFactory the bean factory that {@code @beans} in expressions refer to, if
	 * any
	 * @return the context
	 */
	public static RateLimitContext forInvocation(@Nullable RateLimitRequest request, Method method,
			@Nullable Object[] arguments, String[] parameterNames, @Nullable BeanFactory beanFactory) {
		return new RateLimitContext(request, Objects.requireNonNull(method, "method must not be null"), arguments,
				parameterNames, beanFactory);
	}

	/**
	 * Returns the web request, or {@code null} outside one.
	 * @return the request
	 */
	public @Nullable RateLimitRequest request() {
		return this.request;
	}

	/**
	 * Returns the invoked method, or {@code null} when a filter limits a request.
	 * @return the method
	 */
	public @Nullable Method method() {
		return this.method;
	}

	/**
	 * Returns the method arguments, empty when a filter limits a request.
	 * @return the arguments
	 */
	public @Nullable Object[] arguments() {
		return this.arguments;
	}

	/**
	 * Returns the argument of the parameter with the given name.
	 * @param name the parameter name
	 * @return the argument, or {@code null} if there is no such parameter
	 */
	public @Nullable Object argument(String name) {
		for (int i = 0; i < this.parameterNames.length && i < this.arguments.length; i++) {
			if (name.equals(this.parameterNames[i])) {
				return this.arguments[i];
			}
		}
		return null;
	}

	/**
	 * Returns the response to the call, once it is known: what {@code #response} reads in
	 * the {@code count-if} condition of a policy.
	 * @return the response, or {@code null} before it is known or for a call outside a
	 * web request
	 */
	public @Nullable RateLimitResponse response() {
		return this.response;
	}

	/**
	 * Records the response to the call, which {@code #response} then reads (in place of a
	 * method argument of that name).
	 * @param response the response, or {@code null} for a call outside a web request
	 */
	public void responded(@Nullable RateLimitResponse response) {
		this.response = response;
		this.responded = true;
	}

	/**
	 * Returns the authenticated caller: the Spring Security authentication when Spring
	 * Security is present and the caller is not anonymous, else the request's user
	 * principal.
	 * @return the principal, or {@code null} for an anonymous caller
	 */
	public @Nullable Principal principal() {
		if (this.principalKept) {
			return this.keptPrincipal;
		}
		if (SECURITY_PRESENT) {
			Principal authenticated = SecurityPrincipal.current();
			if (authenticated != null) {
				return authenticated;
			}
		}
		return (this.request != null) ? this.request.getUserPrincipal() : null;
	}

	/**
	 * Keeps the principal as it is now, for the reads that come after the call's
	 * decision: a {@code count-if} condition is evaluated once the response is final,
	 * outside Spring Security's filter chain, which has cleared its context by then.
	 */
	public void keepPrincipal() {
		if (!this.principalKept) {
			this.keptPrincipal = principal();
			this.principalKept = true;
		}
	}

	/**
	 * Returns the SpEL evaluation context of this call, created on first use.
	 * @return the evaluation context
	 */
	public EvaluationContext evaluationContext() {
		EvaluationContext context = this.evaluationContext;
		if (context == null) {
			context = new CallEvaluationContext(this);
			this.evaluationContext = context;
		}
		return context;
	}

	/**
	 * Resolves the variables of an expression from the call, lazily: {@code #request}
	 * (the web stack's own request, such as the {@code HttpServletRequest}),
	 * {@code #principal}, {@code #args}, {@code #response} once the call has responded,
	 * and each argument by name.
	 */
	private static final class CallEvaluationContext extends StandardEvaluationContext {

		/** Stateless; shared by every call. */
		private static final List<MethodResolver> CALL_METHOD_RESOLVERS = List
			.of(new RateLimitExpression.CallMethodResolver());

		private final RateLimitContext call;

		CallEvaluationContext(RateLimitContext call) {
			this.call = call;
			setMethodResolvers(CALL_METHOD_RESOLVERS);
			if (call.beanFactory != null) {
				setBeanResolver(new BeanFactoryResolver(call.beanFactory));
			}
		}

		@Override
		public @Nullable Object lookupVariable(String name) {
			Object value = super.lookupVariable(name);
			if (value != null) {
				return value;
			}
			return switch (name) {
				case "request" -> (this.call.request != null) ? this.call.request.getNativeRequest() : null;
				case "principal" -> this.call.principal();
				case "args" -> this.call.arguments;
				case "response" -> this.call.responded ? this.call.response : this.call.argument(name);
				default -> variable(name);
			};
		}

		/**
		 * Returns the argument of that name, else the web stack's variable of that name
		 * (WebFlux's {@code #exchange}).
		 */
		private @Nullable Object variable(String name) {
			Object argument = this.call.argument(name);
			if (argument != null || this.call.request == null) {
				return argument;
			}
			return this.call.request.getVariable(name);
		}

	}

	/**
	 * Reads Spring Security's context; loaded only when Spring Security is present.
	 */
	private static final class SecurityPrincipal {

		static @Nullable Principal current() {
			Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
			if (authentication == null || !authentication.isAuthenticated()
					|| authentication instanceof AnonymousAuthenticationToken) {
				return null;
			}
			return authentication;
		}

	}

}
