package dev.ratelimit.spring.web;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.MappingMatch;
import org.jspecify.annotations.Nullable;

import org.springframework.core.MethodClassKey;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.handler.AbstractHandlerMethodMapping;
import org.springframework.web.servlet.mvc.condition.PathPatternsRequestCondition;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;

import dev.ratelimit.spring.annotation.RateLimitedMethods;

/**
 * Finds out, before the {@code DispatcherServlet} runs, whether a request will be handled
 * by a {@code @RateLimited} handler method, so that the filter can leave its policies to
 * that method's single decision. Asks the application's handler mappings as the
 * {@code DispatcherServlet} will, on a view of the request whose attribute changes are
 * discarded.
 */
final class AnnotatedHandlerLookup {

	private final Supplier<List<HandlerMapping>> handlerMappings;

	private final RateLimitedMethods methods;

	private final Map<MethodClassKey, Boolean> annotated = new ConcurrentHashMap<>();

	/*
	 * Most requests cannot reach an annotated method, and for them the full look-up
	 * (every handler mapping, which the DispatcherServlet will do again) is skipped. On
	 * first use this remembers the path patterns and HTTP methods of the annotated
	 * methods' mappings; a request that matches none is answered at once, without
	 * wrapping it. The check is a superset of the mappings' own conditions (it ignores
	 * parameters, headers and media types, and lets HEAD and OPTIONS through), so a
	 * request that passes still gets the full look-up, which also sees whether a more
	 * specific mapping that is not annotated wins. The shortcut needs every
	 * handler-method mapping to be a RequestMappingInfoHandlerMapping using path patterns
	 * (the default). Annotated methods registered at run time, after the first request,
	 * are seen only by the full look-up: register them before taking traffic.
	 */
	private volatile @Nullable Candidates candidates;

	/**
	 * Creates a look-up.
	 * @param handlerMappings the handler mappings in the order the
	 * {@code DispatcherServlet} uses them
	 * @param methods the annotated methods
	 */
	AnnotatedHandlerLookup(Supplier<List<HandlerMapping>> handlerMappings, RateLimitedMethods methods) {
		this.handlerMappings = handlerMappings;
		this.methods = methods;
	}

	/**
	 * Returns whether a {@code @RateLimited} handler method will handle a request whose
	 * path the caller has parsed.
	 * @param request the request
	 * @param path the request's URI parsed against its context path, or {@code null} to
	 * parse it here
	 * @return whether the handler is an annotated method
	 */
	boolean isRateLimitedHandler(HttpServletRequest request, @Nullable RequestPath path) {
		if (!this.methods.hasAnnotatedMethods()) {
			return false;
		}
		if (!candidates().mayMatch(request, path)) {
			return false;
		}
		HttpServletRequest view = new AttributeIsolatingRequest(request);
		ServletRequestPathUtils.parseAndCache(view);
		for (HandlerMapping mapping : this.handlerMappings.get()) {
			HandlerExecutionChain chain;
			try {
				chain = mapping.getHandler(view);
			}
			catch (Exception ex) {
				// the DispatcherServlet will answer with an error before any handler
				// method runs
				return false;
			}
			if (chain != null) {
				return chain.getHandler() instanceof HandlerMethod handler && isAnnotated(handler);
			}
		}
		return false;
	}

	private boolean isAnnotated(HandlerMethod handler) {
		return this.annotated.computeIfAbsent(new MethodClassKey(handler.getMethod(), handler.getBeanType()),
				(key) -> RateLimitedMethods.isAnnotated(handler.getMethod(), handler.getBeanType()));
	}

	private Candidates candidates() {
		Candidates found = this.candidates;
		if (found == null) {
			found = Candidates.of(this.handlerMappings.get(), this::isAnnotated);
			this.candidates = found;
		}
		return found;
	}

	/**
	 * The path patterns and HTTP methods of the annotated handler methods' request
	 * mappings, or {@code null} when some handler-method mapping is of a kind whose
	 * mappings cannot be checked here.
	 *
	 * @param mappings the annotated methods' mappings, or {@code null} if every request
	 * may match
	 */
	private record Candidates(@Nullable List<Candidate> mappings) {

		static Candidates of(List<HandlerMapping> handlerMappings, Predicate<HandlerMethod> isAnnotated) {
			List<Candidate> mappings = new ArrayList<>();
			for (HandlerMapping mapping : handlerMappings) {
				if (mapping instanceof RequestMappingInfoHandlerMapping requestMappings) {
					for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : requestMappings.getHandlerMethods()
						.entrySet()) {
						PathPatternsRequestCondition patterns = entry.getKey().getPathPatternsCondition();
						if (patterns == null) {
							return new Candidates(null);
						}
						if (isAnnotated.test(entry.getValue())) {
							mappings.add(new Candidate(List.copyOf(patterns.getPatterns()),
									Set.copyOf(entry.getKey().getMethodsCondition().getMethods())));
						}
					}
				}
				else if (mapping instanceof AbstractHandlerMethodMapping<?>) {
					return new Candidates(null);
				}
			}
			return new Candidates(List.copyOf(mappings));
		}

		/**
		 * Returns whether the request may be handled by an annotated method:
		 * {@code false} only if its path matches no pattern of theirs, or its method is
		 * accepted by none of the mappings whose patterns it matches.
		 */
		boolean mayMatch(HttpServletRequest request, @Nullable RequestPath parsed) {
			List<Candidate> candidates = this.mappings;
			if (candidates == null) {
				return true;
			}
			if (candidates.isEmpty()) {
				return false;
			}
			if (request.getDispatcherType() == DispatcherType.ERROR) {
				// an error dispatch is matched differently (no pre-flight, other method
				// rules): left to the full look-up
				return true;
			}
			PathContainer path = lookupPath(request, parsed);
			String method = request.getMethod();
			for (Candidate candidate : candidates) {
				if (candidate.accepts(method) && candidate.matches(path)) {
					return true;
				}
			}
			return false;
		}

		/**
		 * Returns the path that handler mappings match, parsed as the
		 * {@code DispatcherServlet} will parse it, without leaving a trace on the
		 * request. That is the caller's parse of the URI against the context path, unless
		 * the request is an include or its servlet is mapped by a path prefix
		 * ({@code /app/*}), which the {@code DispatcherServlet} leaves out of the path:
		 * then it is parsed here, on a view of the request whose attribute changes are
		 * discarded.
		 */
		private static PathContainer lookupPath(HttpServletRequest request, @Nullable RequestPath parsed) {
			if (parsed != null && request.getDispatcherType() == DispatcherType.REQUEST
					&& request.getHttpServletMapping().getMappingMatch() != MappingMatch.PATH) {
				return parsed.pathWithinApplication();
			}
			return ServletRequestPathUtils.parseAndCache(new AttributeIsolatingRequest(request))
				.pathWithinApplication();
		}

	}

	/**
	 * The path patterns and HTTP methods of one annotated request mapping.
	 *
	 * @param patterns the path patterns
	 * @param methods the HTTP methods, empty for any
	 */
	private record Candidate(List<PathPattern> patterns, Set<RequestMethod> methods) {

		/**
		 * Returns whether the mapping may accept the method: {@code HEAD} (which
		 * {@code GET} mappings take) and {@code OPTIONS} (pre-flight and default answers)
		 * are left to the full look-up.
		 */
		boolean accepts(String method) {
			if (this.methods.isEmpty() || "HEAD".equals(method) || "OPTIONS".equals(method)) {
				return true;
			}
			RequestMethod requestMethod = RequestMethod.resolve(method);
			return requestMethod == null || this.methods.contains(requestMethod);
		}

		boolean matches(PathContainer path) {
			for (PathPattern pattern : this.patterns) {
				if (pattern.matches(path)) {
					return true;
				}
			}
			return false;
		}

	}

	/**
	 * Lets handler mappings set and read attributes without changing the real request.
	 */
	private static final class AttributeIsolatingRequest extends HttpServletRequestWrapper {

		private final Map<String, Object> added = new HashMap<>();

		private final Set<String> removed = new HashSet<>();

		AttributeIsolatingRequest(HttpServletRequest request) {
			super(request);
		}

		@Override
		public @Nullable Object getAttribute(String name) {
			Object value = this.added.get(name);
			if (value != null) {
				return value;
			}
			return this.removed.contains(name) ? null : super.getAttribute(name);
		}

		@Override
		public void setAttribute(String name, @Nullable Object value) {
			if (value == null) {
				removeAttribute(name);
				return;
			}
			this.added.put(name, value);
			this.removed.remove(name);
		}

		@Override
		public void removeAttribute(String name) {
			this.added.remove(name);
			this.removed.add(name);
		}

	}

}
