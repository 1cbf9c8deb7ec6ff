package dev.ratelimit.spring.web.reactive;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import dev.ratelimit.core.Decision;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.annotation.RateLimitedMethods;
import dev.ratelimit.spring.web.FilterRule;
import dev.ratelimit.spring.web.PendingLimits;
import dev.ratelimit.spring.web.ProblemJson;
import dev.ratelimit.spring.web.RateLimitHeaders;
import dev.ratelimit.spring.web.RateLimitProblems;
import dev.ratelimit.spring.web.RuleBasedFilter;

/**
 * Applies {@code ratelimit.filters} to a WebFlux application, as the servlet filter does
 * to a servlet one: the same rules, paths, methods, costs, conditions, headers and
 * answers. It runs after Spring Security's {@code WebFilterChainProxy}, so that the
 * reactive security context gives the principal and the tier. It never blocks: the
 * limiter is asked through its asynchronous calls, a shaping delay is a timer, and the
 * request's handling goes on where the decision completes. When the handler of the
 * exchange is a {@code @RateLimited} method returning a publisher, the filter leaves its
 * policies to that method's interceptor, which decides both in one decision on
 * subscription.
 * <p>
 * The starter registers two: one ahead of Spring Security's {@code WebFilterChainProxy}
 * for the rules marked {@code before-security}, and one after it for the others. The
 * first to see an exchange keeps its state: it settles the {@code count-if} policies just
 * before the response is committed, by the status the client gets (after a
 * {@code WebExceptionHandler} has answered an error, say), or when the exchange is
 * cancelled; and it gives back concurrency permits when the exchange completes, fails or
 * is cancelled.
 */
public class RateLimitWebFilter implements WebFilter, Ordered, RuleBasedFilter {

	/**
	 * The key of the request in the subscriber's context, which a reactive
	 * {@code @RateLimited} method reads.
	 */
	static final String REQUEST_KEY = RateLimitWebFilter.class.getName() + ".request";

	private static final Log logger = LogFactory.getLog(RateLimitWebFilter.class);

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.authentication.AnonymousAuthenticationToken",
			RateLimitWebFilter.class.getClassLoader());

	private final RateLimitService service;

	private volatile List<FilterRule> rules;

	private final RateLimitHeaders headers;

	private final AnnotatedHandlers handlers;

	private final @Nullable BeanFactory beanFactory;

	private final int order;

	private final boolean beforeSecurity;

	/**
	 * Creates the filter.
	 * @param service the decision path
	 * @param rules the filter rules, in configuration order
	 * @param headers the writer of the rate-limit headers
	 * @param handlerMappings the application's request mappings, where the handler of an
	 * exchange is found
	 * @param annotatedMethods the annotated methods, or {@code null} when
	 * {@code @RateLimited} is not applied
	 * @param beanFactory the bean factory that {@code @beans} in expressions refer to, if
	 * any
	 * @param order the filter's order among the web filters
	 */
	public RateLimitWebFilter(RateLimitService service, List<FilterRule> rules, RateLimitHeaders headers,
			Supplier<List<RequestMappingHandlerMapping>> handlerMappings,
			Supplier<@Nullable RateLimitedMethods> annotatedMethods, @Nullable BeanFactory beanFactory, int order) {
		this(service, rules, headers, handlerMappings, annotatedMethods, beanFactory, order, false);
	}

	/**
	 * Creates the filter of one stage.
	 * @param service the decision path
	 * @param rules the filter rules of both stages, in configuration order: the filter
	 * keeps its own
	 * @param headers the writer of the rate-limit headers
	 * @param handlerMappings the application's request mappings, where the handler of an
	 * exchange is found
	 * @param annotatedMethods the annotated methods, or {@code null} when
	 * {@code @RateLimited} is not applied
	 * @param beanFactory the bean factory that {@code @beans} in expressions refer to, if
	 * any
	 * @param order the filter's order among the web filters
	 * @param beforeSecurity whether this filter runs ahead of Spring Security and applies
	 * the rules marked {@code before-security}; else it applies the others
	 */
	public RateLimitWebFilter(RateLimitService service, List<FilterRule> rules, RateLimitHeaders headers,
			Supplier<List<RequestMappingHandlerMapping>> handlerMappings,
			Supplier<@Nullable RateLimitedMethods> annotatedMethods, @Nullable BeanFactory beanFactory, int order,
			boolean beforeSecurity) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.beforeSecurity = beforeSecurity;
		this.rules = ownRules(rules);
		this.headers = Objects.requireNonNull(headers, "headers must not be null");
		this.handlers = new AnnotatedHandlers(handlerMappings, annotatedMethods);
		this.beanFactory = beanFactory;
		this.order = order;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	private List<FilterRule> ownRules(List<FilterRule> rules) {
		return rules.stream().filter((rule) -> rule.beforeSecurity() == this.beforeSecurity).toList();
	}

	/**
	 * Returns whether this filter runs ahead of Spring Security, with the rules marked
	 * {@code before-security}.
	 * @return whether it is the filter before Spring Security
	 */
	public boolean isBeforeSecurity() {
		return this.beforeSecurity;
	}

	/**
	 * Returns the rules the filter applies: those of its stage.
	 * @return the rules
	 */
	public List<FilterRule> getRules() {
		return this.rules;
	}

	/**
	 * Replaces the rules from the next request on; a request already admitted keeps the
	 * rules it was admitted by.
	 * @param rules the new rules of both stages: the filter keeps its own
	 */
	public void replaceRules(List<FilterRule> rules) {
		this.rules = ownRules(rules);
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (this.beforeSecurity && this.rules.isEmpty() && !this.service.policies().countsByResponse()) {
			// nothing to decide before Spring Security, nor to settle once it has
			// answered
			return chain.filter(exchange);
		}
		// the first rate-limit filter of the exchange keeps its state and settles it
		ExchangeLimits outer = ExchangeLimits.of(exchange);
		ExchangeLimits limits = (outer != null) ? outer : new ExchangeLimits();
		if (outer == null) {
			exchange.getAttributes().put(ExchangeLimits.ATTRIBUTE, limits);
			exchange.getResponse().beforeCommit(() -> {
				settleCharges(exchange, limits);
				return Mono.empty();
			});
		}
		Mono<Void> admitted = exchange.getPrincipal()
			.map((principal) -> Optional.ofNullable(authenticated(principal)))
			.defaultIfEmpty(Optional.empty())
			.flatMap((principal) -> {
				ReactiveRateLimitRequest request = new ReactiveRateLimitRequest(exchange, principal.orElse(null));
				return admit(request, limits, chain).contextWrite((context) -> context.put(REQUEST_KEY, request));
			});
		return (outer != null) ? admitted : admitted.doFinally((signal) -> complete(exchange, limits, signal));
	}

	private Mono<Void> admit(ReactiveRateLimitRequest request, ExchangeLimits limits, WebFilterChain chain) {
		ServerWebExchange exchange = request.exchange();
		List<FilterRule> rules = this.rules;
		List<FilterRule> matched = rules.isEmpty() ? List.of() : matching(rules, exchange);
		if (matched.isEmpty()) {
			return chain.filter(exchange);
		}
		RateLimitContext context = RateLimitContext.forRequest(request, this.beanFactory);
		CompletableFuture<RateLimitResult> decided;
		try {
			PendingLimits applicable = PendingLimits.of(matched, context);
			if (this.handlers.isRateLimitedHandler(exchange)) {
				limits.defer(applicable);
				return chain.filter(exchange);
			}
			decided = this.service.decideAppliedAsync(applicable.policies(), applicable.cost(), applicable.shadowCost(),
					context);
		}
		catch (RateLimitEvaluationException ex) {
			return refuse(exchange, ex);
		}
		if (decided.isDone() && !decided.isCompletedExceptionally()) {
			// decided at once (in memory): no subscription to wait for the decision
			return proceed(exchange, limits, decided.join(), chain);
		}
		// a subscriber that cancels while the limiter decides still gets its permits
		// given back, once the decision arrives
		AtomicBoolean delivered = new AtomicBoolean();
		return Mono.fromFuture(decided, true).doOnCancel(() -> {
			if (!delivered.get()) {
				decided.thenAccept(this.service::releaseAsync);
			}
		}).flatMap((result) -> {
			delivered.set(true);
			return proceed(exchange, limits, result, chain);
		});
	}

	/**
	 * Goes on with a decided exchange: its headers, then the rejection, or the chain
	 * after any shaping delay.
	 */
	private Mono<Void> proceed(ServerWebExchange exchange, ExchangeLimits limits, RateLimitResult result,
			WebFilterChain chain) {
		answered(exchange, limits, result);
		if (!result.isAllowed()) {
			return reject(exchange, result.decision());
		}
		Duration delay = result.delay();
		return delay.isZero() ? chain.filter(exchange) : Mono.delay(delay).then(chain.filter(exchange));
	}

	private static List<FilterRule> matching(List<FilterRule> rules, ServerWebExchange exchange) {
		String method = exchange.getRequest().getMethod().name();
		PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
		List<FilterRule> matched = new ArrayList<>(2);
		for (FilterRule rule : rules) {
			if (rule.matches(method, path)) {
				matched.add(rule);
			}
		}
		return matched;
	}

	/**
	 * Records a result for the exchange (permits held until it completes, a
	 * {@code count-if} charge until its response is known) and writes its headers.
	 */
	private void answered(ServerWebExchange exchange, ExchangeLimits limits, RateLimitResult result) {
		if (!limits.decided(result, true)) {
			// the exchange has completed: nothing would give the permits back later
			this.service.releaseAsync(result);
		}
		if (result.chargesAfterResponse() && (exchange.getResponse().isCommitted() || !limits.holdCharge(result))) {
			this.service.chargeAfterResponseAsync(result, new ReactiveRateLimitResponse(exchange.getResponse()));
		}
		if (!exchange.getResponse().isCommitted()) {
			this.headers.write(result, exchange.getResponse().getHeaders()::set);
		}
	}

	/**
	 * Ends an exchange: charges the policies left for a handler method that was never
	 * invoked (its arguments failed to bind, say: a failing request is not free) and
	 * gives back the permits. The {@code count-if} policies are settled just before the
	 * response is committed, when its status is final: after an error, a
	 * {@code WebExceptionHandler} outside every web filter writes it; at once if its
	 * response is committed already, and as if every condition held if the exchange was
	 * cancelled before a response.
	 */
	private void complete(ServerWebExchange exchange, ExchangeLimits limits, SignalType signal) {
		PendingLimits leftover = limits.takePending();
		if (leftover != null) {
			chargeLeftover(exchange, limits, leftover);
		}
		if (exchange.getResponse().isCommitted()) {
			settleCharges(exchange, limits);
		}
		else if (signal == SignalType.CANCEL) {
			// the client went away before any response: as if every condition held, so
			// that hanging up gives no free try
			for (RateLimitResult result : limits.takeCharges()) {
				this.service.chargeUnansweredAsync(result);
			}
		}
		for (RateLimitResult result : limits.complete()) {
			this.service.releaseAsync(result);
		}
	}

	/**
	 * Settles the {@code count-if} policies of an exchange by its response.
	 */
	private void settleCharges(ServerWebExchange exchange, ExchangeLimits limits) {
		List<RateLimitResult> charges = limits.takeCharges();
		if (!charges.isEmpty()) {
			ReactiveRateLimitResponse response = new ReactiveRateLimitResponse(exchange.getResponse());
			for (RateLimitResult result : charges) {
				this.service.chargeAfterResponseAsync(result, response);
			}
		}
	}

	private void chargeLeftover(ServerWebExchange exchange, ExchangeLimits limits, PendingLimits leftover) {
		ReactiveRateLimitRequest request = new ReactiveRateLimitRequest(exchange, null);
		try {
			this.service
				.decideAppliedAsync(leftover.policies(), leftover.cost(), leftover.shadowCost(),
						RateLimitContext.forRequest(request, this.beanFactory))
				.thenAccept((result) -> {
					this.service.releaseAsync(result);
					if (result.chargesAfterResponse()
							&& (exchange.getResponse().isCommitted() || !limits.holdCharge(result))) {
						this.service.chargeAfterResponseAsync(result,
								new ReactiveRateLimitResponse(exchange.getResponse()));
					}
				});
		}
		catch (RateLimitEvaluationException ex) {
			if (logger.isDebugEnabled()) {
				logger.debug("Charged nothing for a request whose handler method was not invoked: " + ex.getMessage(),
						ex);
			}
		}
	}

	/**
	 * Answers a rejected request: 429 (503 when the limiter is unavailable and refuses),
	 * with {@code Retry-After} and the same problem as the servlet side.
	 */
	protected Mono<Void> reject(ServerWebExchange exchange, Decision decision) {
		Long retryAfter = RateLimitProblems.retryAfterSeconds(decision);
		if (retryAfter != null) {
			exchange.getResponse().getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		}
		return write(exchange.getResponse(), RateLimitProblems.problemAt(decision, path(exchange)));
	}

	/**
	 * Answers a request whose cost, key or condition could not be evaluated: 400.
	 */
	protected Mono<Void> refuse(ServerWebExchange exchange, RateLimitEvaluationException failure) {
		if (logger.isDebugEnabled()) {
			logger.debug("Answered 400: " + failure.getMessage(), failure);
		}
		return write(exchange.getResponse(), RateLimitProblems.problemAt(failure, path(exchange)));
	}

	private static String path(ServerWebExchange exchange) {
		return exchange.getRequest().getPath().value();
	}

	static Mono<Void> write(ServerHttpResponse response, ProblemDetail problem) {
		if (response.isCommitted()) {
			return Mono.empty();
		}
		response.setStatusCode(HttpStatus.valueOf(problem.getStatus()));
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		byte[] json = ProblemJson.write(problem).getBytes(StandardCharsets.UTF_8);
		DataBuffer buffer = response.bufferFactory().wrap(json);
		return response.writeWith(Mono.just(buffer));
	}

	/**
	 * Returns the principal as the decision path reads it: none for an anonymous caller.
	 */
	private static @Nullable Principal authenticated(Principal principal) {
		return (SECURITY_PRESENT && SecurityPrincipals.isAnonymous(principal)) ? null : principal;
	}

	/**
	 * Reads Spring Security's authentications; loaded only when Spring Security is
	 * present.
	 */
	private static final class SecurityPrincipals {

		static boolean isAnonymous(Principal principal) {
			return principal instanceof org.springframework.security.authentication.AnonymousAuthenticationToken
					|| (principal instanceof org.springframework.security.core.Authentication authentication
							&& !authentication.isAuthenticated());
		}

	}

}
