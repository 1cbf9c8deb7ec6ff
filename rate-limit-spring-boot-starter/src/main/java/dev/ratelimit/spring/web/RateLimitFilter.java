package dev.ratelimit.spring.web;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.HandlerMapping;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitResponse;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.Sleeper;
import dev.ratelimit.spring.annotation.RateLimitedMethods;

/**
 * Limits the requests that match {@code ratelimit.filters}: one decision per request, for
 * the matching rules' policies together. When the handler method carries
 * {@code @RateLimited}, the annotation's interceptor decides them with its own. A rule
 * with a condition ({@code when}) applies only to the requests for which it holds. A
 * condition, cost or key of an enforced policy that cannot be evaluated is answered 400,
 * before anything is charged.
 * <p>
 * The starter registers two: one ahead of Spring Security for the rules marked
 * {@code before-security}, and one after it for the others. The first to see a request
 * keeps its state and settles it once the response is final, when every filter inside it
 * (Spring Security's among them) has answered: it settles the {@code count-if} policies
 * by the status the client gets (500 for an exception that leaves the filter chain, which
 * the container answers so) and releases concurrency permits, after an asynchronous
 * response completes if there is one.
 */
public class RateLimitFilter extends OncePerRequestFilter implements RuleBasedFilter {

	private final RateLimitService service;

	private final boolean beforeSecurity;

	private volatile List<FilterRule> rules;

	private final RateLimitHeaders headers;

	private final Sleeper sleeper;

	private final Supplier<Optional<AnnotatedHandlerLookup>> handlerLookup;

	private final Supplier<@Nullable HandlerExceptionResolver> exceptionResolver;

	private final @Nullable BeanFactory beanFactory;

	/**
	 * Creates the filter.
	 * @param service the decision path
	 * @param rules the filter rules
	 * @param headers the header writer
	 * @param sleeper what waits out shaping delays
	 * @param annotatedMethods the annotated methods, supplying {@code null} when
	 * annotations are not enforced; asked once
	 * @param handlerMappings the application's handler mappings in the order the
	 * {@code DispatcherServlet} uses them, which tell whether an annotated method will
	 * handle a request
	 * @param exceptionResolver the MVC exception resolver that answers rejections,
	 * supplying {@code null} to write the problem directly
	 * @param beanFactory the bean factory that {@code @beans} in expressions refer to
	 */
	public RateLimitFilter(RateLimitService service, List<FilterRule> rules, RateLimitHeaders headers, Sleeper sleeper,
			Supplier<@Nullable RateLimitedMethods> annotatedMethods, Supplier<List<HandlerMapping>> handlerMappings,
			Supplier<@Nullable HandlerExceptionResolver> exceptionResolver, @Nullable BeanFactory beanFactory) {
		this(service, rules, headers, sleeper, annotatedMethods, handlerMappings, exceptionResolver, beanFactory,
				false);
	}

	/**
	 * Creates the filter of one stage.
	 * @param service the decision path
	 * @param rules the filter rules, of both stages: the filter keeps its own
	 * @param headers the header writer
	 * @param sleeper what waits out shaping delays
	 * @param annotatedMethods the annotated methods, supplying {@code null} when
	 * annotations are not enforced; asked once
	 * @param handlerMappings the application's handler mappings in the order the
	 * {@code DispatcherServlet} uses them, which tell whether an annotated method will
	 * handle a request
	 * @param exceptionResolver the MVC exception resolver that answers rejections,
	 * supplying {@code null} to write the problem directly
	 * @param beanFactory the bean factory that {@code @beans} in expressions refer to
	 * @param beforeSecurity whether this filter runs ahead of Spring Security and applies
	 * the rules marked {@code before-security}; else it applies the others
	 */
	public RateLimitFilter(RateLimitService service, List<FilterRule> rules, RateLimitHeaders headers, Sleeper sleeper,
			Supplier<@Nullable RateLimitedMethods> annotatedMethods, Supplier<List<HandlerMapping>> handlerMappings,
			Supplier<@Nullable HandlerExceptionResolver> exceptionResolver, @Nullable BeanFactory beanFactory,
			boolean beforeSecurity) {
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.beforeSecurity = beforeSecurity;
		this.rules = ownRules(rules);
		this.headers = Objects.requireNonNull(headers, "headers must not be null");
		this.sleeper = Objects.requireNonNull(sleeper, "sleeper must not be null");
		this.handlerLookup = SingletonSupplier.of(() -> Optional.ofNullable(annotatedMethods.get())
			.map((methods) -> new AnnotatedHandlerLookup(handlerMappings, methods)));
		this.exceptionResolver = exceptionResolver;
		this.beanFactory = beanFactory;
	}

	/**
	 * Returns the path of a request within the application, which filter patterns match.
	 * @param request the request
	 * @return the path without the context path
	 */
	static PathContainer pathWithinApplication(HttpServletRequest request) {
		return requestPath(request).pathWithinApplication();
	}

	private static RequestPath requestPath(HttpServletRequest request) {
		return RequestPath.parse(request.getRequestURI(), request.getContextPath());
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
	 * Returns the filter rules this filter applies: those of its stage.
	 * @return the rules
	 */
	public List<FilterRule> getRules() {
		return this.rules;
	}

	/**
	 * Replaces the filter rules, from the next request on, after a reload of the
	 * configuration. A request reads the rules once.
	 * @param rules the new rules of both stages, already checked: the filter keeps its
	 * own
	 */
	public void replaceRules(List<FilterRule> rules) {
		this.rules = ownRules(rules);
	}

	/**
	 * The filter before Spring Security stays out of a request while it has no rules and
	 * no policy counts by the response: then there is nothing to decide there, nor to
	 * settle once Spring Security has answered.
	 */
	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return this.beforeSecurity && this.rules.isEmpty() && !this.service.policies().countsByResponse();
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		// the first rate-limit filter of the request keeps its state and settles it
		RequestLimits outer = RequestLimits.of(request);
		RequestLimits limits = (outer != null) ? outer : new RequestLimits(this);
		if (outer == null) {
			request.setAttribute(RequestLimits.ATTRIBUTE, limits);
		}
		boolean escaped = true;
		try {
			List<FilterRule> rules = this.rules;
			RequestPath path = rules.isEmpty() ? null : requestPath(request);
			List<FilterRule> matched = (path != null) ? matching(rules, request, path.pathWithinApplication())
					: List.of();
			if (!matched.isEmpty() && !admit(matched, path, limits, request, response)) {
				escaped = false;
				return;
			}
			chain.doFilter(request, response);
			escaped = false;
		}
		finally {
			// A failing request is not free. If the annotated handler method was never
			// invoked (its arguments failed to bind, say),
			// PendingLimitsExceptionResolver has charged the filter's policies before
			// the error response, with headers and a 429 if over the limit. If the
			// failure never reached it, they are charged here.
			decideLeftover(limits, request, response, false);
			if (outer == null) {
				settle(limits, request, response, escaped);
			}
		}
	}

	/**
	 * Settles a request once every filter inside this one has answered it: at once, or
	 * when its asynchronous response completes. An exception that leaves the filter chain
	 * is answered 500 by the container (an error page keeps that status), which is what
	 * the {@code count-if} conditions then read, unless a response was already sent.
	 */
	private void settle(RequestLimits limits, HttpServletRequest request, HttpServletResponse response,
			boolean escaped) {
		if (request.isAsyncStarted()) {
			request.getAsyncContext().addListener(new ReleaseOnCompletion(limits, response));
		}
		else {
			release(limits, (escaped && !response.isCommitted()) ? ServletRateLimitResponse.failed(response)
					: new ServletRateLimitResponse(response));
		}
	}

	private List<FilterRule> matching(List<FilterRule> rules, HttpServletRequest request, PathContainer path) {
		String method = request.getMethod();
		List<FilterRule> matched = new ArrayList<>(2);
		for (FilterRule rule : rules) {
			if (rule.matches(method, path)) {
				matched.add(rule);
			}
		}
		return matched;
	}

	/**
	 * Decides a matched request, or leaves the decision to its annotated handler method.
	 * @return whether the request may proceed; if not, it has been answered
	 */
	private boolean admit(List<FilterRule> matched, RequestPath path, RequestLimits limits, HttpServletRequest request,
			HttpServletResponse response) throws ServletException, IOException {
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(request), this.beanFactory);
		RateLimitResult result;
		try {
			PendingLimits applicable = PendingLimits.of(matched, context);
			AnnotatedHandlerLookup lookup = this.beforeSecurity ? null : this.handlerLookup.get().orElse(null);
			if (lookup != null && lookup.isRateLimitedHandler(request, path)) {
				limits.deferTo(this, applicable);
				return true;
			}
			result = decide(applicable, limits, response, context);
		}
		catch (RateLimitEvaluationException ex) {
			refuse(request, response, ex);
			return false;
		}
		if (!result.isAllowed()) {
			reject(request, response, result.decision());
			return false;
		}
		waitForTurn(result.delay());
		return true;
	}

	private RateLimitResult decide(PendingLimits applicable, RequestLimits limits, HttpServletResponse response,
			RateLimitContext context) {
		RateLimitResult result = this.service.decideApplied(applicable.policies(), applicable.cost(),
				applicable.shadowCost(), context);
		if (!limits.decided(result, true)) {
			// the response has completed: nothing would release the permits later
			this.service.release(result);
		}
		if (result.chargesAfterResponse() && !limits.holdCharge(result)) {
			this.service.chargeAfterResponse(result, new ServletRateLimitResponse(response));
		}
		this.headers.write(response, result);
		return result;
	}

	private void waitForTurn(Duration delay) throws ServletException {
		if (delay.isZero()) {
			return;
		}
		try {
			this.sleeper.sleep(delay);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ServletException("Interrupted while waiting for a rate-limit turn", ex);
		}
	}

	/**
	 * Decides the policies that the filter left for a {@code @RateLimited} handler method
	 * that will not be invoked, as the filter would have decided them itself: the request
	 * is charged, since a failing request is not free, and the response gets the
	 * rate-limit headers unless it is committed. Concurrency permits are held until the
	 * response completes.
	 * @param limits the state of the request
	 * @param request the request
	 * @param response the response
	 * @param answer whether to answer a rejection (429), or a key expression that cannot
	 * be evaluated (400), in place of the response the request would otherwise get;
	 * possible only while none of it is written
	 * @return whether the request was answered here
	 * @throws IOException if writing the answer fails
	 */
	boolean decideLeftover(RequestLimits limits, HttpServletRequest request, HttpServletResponse response,
			boolean answer) throws IOException {
		PendingLimits leftover = limits.takePending();
		if (leftover == null) {
			return false;
		}
		RateLimitResult result;
		try {
			result = decide(leftover, limits, response,
					RateLimitContext.forRequest(new ServletRateLimitRequest(request), this.beanFactory));
		}
		catch (RateLimitEvaluationException ex) {
			if (answer && !response.isCommitted()) {
				refuse(request, response, ex);
				return true;
			}
			if (this.logger.isDebugEnabled()) {
				this.logger.debug(
						"Charged nothing for a request whose handler method was not invoked: " + ex.getMessage(), ex);
			}
			return false;
		}
		if (!result.isAllowed() && answer && !response.isCommitted()) {
			reject(request, response, result.decision());
			return true;
		}
		return false;
	}

	/**
	 * Settles what the request owes once its response is known: its {@code count-if}
	 * policies, then its concurrency permits.
	 */
	private void release(RequestLimits limits, RateLimitResponse answered) {
		List<RateLimitResult> held = limits.complete();
		List<RateLimitResult> charges = limits.takeCharges();
		for (RateLimitResult result : charges) {
			this.service.chargeAfterResponse(result, answered);
		}
		for (RateLimitResult result : held) {
			this.service.release(result);
		}
	}

	/**
	 * Answers a rejected request: through the MVC exception resolvers, so that the
	 * application's own advice for {@link RateLimitExceededException} applies, else with
	 * the problem written here.
	 * @param request the request
	 * @param response the response
	 * @param decision the rejecting decision
	 * @throws IOException if writing fails
	 */
	protected void reject(HttpServletRequest request, HttpServletResponse response, Decision decision)
			throws IOException {
		HandlerExceptionResolver resolver = this.exceptionResolver.get();
		if (resolver != null && resolver.resolveException(request, response, null,
				new RateLimitExceededException(decision)) != null) {
			return;
		}
		Long retryAfter = RateLimitProblems.retryAfterSeconds(decision);
		if (retryAfter != null) {
			response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		}
		write(response, RateLimitProblems.problem(decision, request));
	}

	/**
	 * Answers a request for which a cost or key expression could not be evaluated, with
	 * nothing charged: through the MVC exception resolvers, so that the application's own
	 * advice for {@link RateLimitEvaluationException} applies, else with the 400 problem
	 * written here (and the exception logged at debug level, as the client's doing).
	 * @param request the request
	 * @param response the response
	 * @param failure the failure
	 * @throws IOException if writing fails
	 */
	protected void refuse(HttpServletRequest request, HttpServletResponse response,
			RateLimitEvaluationException failure) throws IOException {
		HandlerExceptionResolver resolver = this.exceptionResolver.get();
		if (resolver != null && resolver.resolveException(request, response, null, failure) != null) {
			return;
		}
		if (this.logger.isDebugEnabled()) {
			this.logger.debug("Answered 400: " + failure.getMessage(), failure);
		}
		write(response, RateLimitProblems.problem(failure, request));
	}

	private static void write(HttpServletResponse response, ProblemDetail problem) throws IOException {
		response.setStatus(problem.getStatus());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setCharacterEncoding("UTF-8");
		PrintWriter writer = response.getWriter();
		writer.write(ProblemJson.write(problem));
		writer.flush();
	}

	/**
	 * Releases the permits of an asynchronous request when it ends.
	 */
	private final class ReleaseOnCompletion implements AsyncListener {

		private final RequestLimits limits;

		private final HttpServletResponse response;

		ReleaseOnCompletion(RequestLimits limits, HttpServletResponse response) {
			this.limits = limits;
			this.response = response;
		}

		// The status is final on completion: after an asynchronous error or timeout, the
		// container's error handling has set it by then.
		@Override
		public void onComplete(AsyncEvent event) {
			release(this.limits, new ServletRateLimitResponse(this.response));
		}

		@Override
		public void onTimeout(AsyncEvent event) {
		}

		@Override
		public void onError(AsyncEvent event) {
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			if (event.getAsyncContext() != null) {
				event.getAsyncContext().addListener(this);
			}
		}

	}

}
