package dev.ratelimit.spring.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitRequest;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.RateLimitService;

/**
 * Limits a {@code @RateLimited} method that returns a reactive type ({@code Mono},
 * {@code Flux} or any type Spring adapts to a {@code Publisher}): the method returns at
 * once a publisher that decides when it is subscribed to, never when it is assembled, and
 * invokes the method only if the call is allowed. A rejection is an error signal
 * ({@link RateLimitExceededException}); a shaping delay is a timer, not a sleeping
 * thread; concurrency permits are given back when the publisher completes, fails or is
 * cancelled. Loaded only when Project Reactor is present.
 */
final class ReactiveCalls {

	private final RateLimitService service;

	private final @Nullable ReactiveWebInvocationSupport web;

	private final @Nullable BeanFactory beanFactory;

	private final ReactiveAdapterRegistry adapters = ReactiveAdapterRegistry.getSharedInstance();

	ReactiveCalls(RateLimitService service, @Nullable WebInvocationSupport web, @Nullable BeanFactory beanFactory) {
		this.service = service;
		this.web = (web instanceof ReactiveWebInvocationSupport reactive) ? reactive : null;
		this.beanFactory = beanFactory;
	}

	/**
	 * Returns the adapter of a method's reactive return type, or {@code null} when the
	 * method returns something else (or a deferred type that is not a publisher, such as
	 * a {@code CompletableFuture}, which the interceptor decides as an ordinary call).
	 */
	@Nullable ReactiveAdapter adapterOf(Method method) {
		ReactiveAdapter adapter = this.adapters.getAdapter(method.getReturnType());
		return (adapter != null && adapter.getDescriptor().isDeferred()) ? adapter : null;
	}

	Object invoke(MethodInvocation invocation, Method method, MethodLimits limits, ReactiveAdapter adapter) {
		if (adapter.isMultiValue()) {
			Flux<Object> limited = Mono.deferContextual((context) -> decide(invocation, method, limits, context))
				.flatMapMany((decided) -> run(decided, Flux.defer(() -> Flux.from(proceed(invocation, adapter)))));
			return adapter.fromPublisher(limited);
		}
		Mono<Object> limited = Mono.deferContextual((context) -> decide(invocation, method, limits, context))
			.flatMap((decided) -> run(decided, Mono.defer(() -> Mono.from(proceed(invocation, adapter)))));
		return adapter.fromPublisher(limited);
	}

	/**
	 * A call's result with what the web request took over: the permits (released when the
	 * response completes) and the {@code count-if} charge (once the response is known).
	 */
	private record Decided(RateLimitResult result, boolean releasedByWeb, boolean chargedByWeb) {

	}

	private Mono<Decided> decide(MethodInvocation invocation, Method method, MethodLimits limits,
			ContextView subscriber) {
		ReactiveWebInvocationSupport web = this.web;
		RateLimitRequest request = (web != null) ? web.currentRequest(subscriber) : null;
		boolean handler = web != null && request != null && web.isHandler(request, method);
		if (handler) {
			// taken before any expression is evaluated, as for an ordinary call: the
			// method is called, so the filter must not charge its policies after the fact
			web.takePending(request);
		}
		CompletableFuture<RateLimitResult> decided;
		try {
			RateLimitContext context = RateLimitContext.forInvocation(request, method, invocation.getArguments(),
					limits.parameterNamesShared(), this.beanFactory);
			MethodLimits.Charge charge = limits.charge(context);
			decided = (handler)
					? web.decideWithPendingAsync(request, charge.policies(), charge.cost(), charge.shadowCost(),
							context)
					: this.service.decideAppliedAsync(charge.policies(), charge.cost(), charge.shadowCost(), context);
		}
		catch (RateLimitEvaluationException ex) {
			return Mono.error(handler ? ex : RateLimitedInterceptor.notTheClients(ex));
		}
		catch (RuntimeException ex) {
			if (handler) {
				web.restorePending(request);
			}
			return Mono.error(ex);
		}
		// a subscriber that cancels while the limiter decides still gets its permits
		// given back, once the decision arrives
		AtomicBoolean delivered = new AtomicBoolean();
		return Mono.fromFuture(decided, true).doOnCancel(() -> {
			if (!delivered.get()) {
				decided.thenAccept(this.service::releaseAsync);
			}
		}).map((result) -> {
			delivered.set(true);
			boolean releasedByWeb = web != null && request != null && web.onDecision(request, result, handler);
			boolean chargedByWeb = result.isAllowed() && result.chargesAfterResponse() && web != null && request != null
					&& web.holdCharge(request, result);
			return new Decided(result, releasedByWeb, chargedByWeb);
		});
	}

	private Flux<Object> run(Decided decided, Flux<Object> body) {
		Throwable rejection = rejection(decided);
		if (rejection != null) {
			return Flux.error(rejection);
		}
		Duration delay = decided.result().delay();
		Flux<Object> delayed = delay.isZero() ? body : Mono.delay(delay).thenMany(body);
		return delayed.doFinally((signal) -> settle(decided));
	}

	private Mono<Object> run(Decided decided, Mono<Object> body) {
		Throwable rejection = rejection(decided);
		if (rejection != null) {
			return Mono.error(rejection);
		}
		Duration delay = decided.result().delay();
		Mono<Object> delayed = delay.isZero() ? body : Mono.delay(delay).then(body);
		return delayed.doFinally((signal) -> settle(decided));
	}

	/**
	 * Returns the error signal of a rejected call, whose permits (it holds none unless
	 * the web request took them) are given back; {@code null} for an allowed call.
	 */
	private @Nullable Throwable rejection(Decided decided) {
		RateLimitResult result = decided.result();
		if (result.isAllowed()) {
			return null;
		}
		if (!decided.releasedByWeb()) {
			this.service.releaseAsync(result);
		}
		return new RateLimitExceededException(result.decision());
	}

	/**
	 * Ends a call that was allowed: charges its {@code count-if} policies, with no
	 * response to read, unless the web request charges them once its response is known,
	 * and gives back its permits unless the web request holds them.
	 */
	private void settle(Decided decided) {
		RateLimitResult result = decided.result();
		if (result.chargesAfterResponse() && !decided.chargedByWeb()) {
			this.service.chargeAfterResponseAsync(result, null);
		}
		if (!decided.releasedByWeb()) {
			this.service.releaseAsync(result);
		}
	}

	/**
	 * Invokes the method, on each subscription anew (a resubscribed publisher calls it
	 * again, as a retry expects).
	 */
	@SuppressWarnings("unchecked")
	private static Publisher<Object> proceed(MethodInvocation invocation, ReactiveAdapter adapter) {
		MethodInvocation call = (invocation instanceof ProxyMethodInvocation proxy) ? proxy.invocableClone()
				: invocation;
		Object returned;
		try {
			returned = call.proceed();
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
		if (returned == null) {
			return Mono.empty();
		}
		return (Publisher<Object>) adapter.toPublisher(returned);
	}

}
