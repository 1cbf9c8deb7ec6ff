package dev.ratelimit.spring.web;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;

import dev.ratelimit.spring.annotation.RateLimitedMethods;

/**
 * Finds out, before the {@code DispatcherServlet} runs, whether a request will be handled by a {@code @RateLimited}
 * handler method, so that the filter can leave its policies to that method's single decision. Asks the application's
 * handler mappings as the {@code DispatcherServlet} will, on a view of the request whose attribute changes are
 * discarded.
 */
public final class AnnotatedHandlerLookup {

	private final Supplier<List<HandlerMapping>> handlerMappings;

	private final RateLimitedMethods methods;

	/**
	 * Creates a look-up.
	 * @param handlerMappings the handler mappings in the order the {@code DispatcherServlet} uses them
	 * @param methods the annotated methods
	 */
	public AnnotatedHandlerLookup(Supplier<List<HandlerMapping>> handlerMappings, RateLimitedMethods methods) {
		this.handlerMappings = handlerMappings;
		this.methods = methods;
	}

	/**
	 * Returns whether a {@code @RateLimited} handler method will handle a request.
	 * @param request the request
	 * @return whether the handler is an annotated method
	 */
	public boolean isRateLimitedHandler(HttpServletRequest request) {
		if (!this.methods.hasAnnotatedMethods()) {
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
				// the DispatcherServlet will answer with an error before any handler method runs
				return false;
			}
			if (chain != null) {
				return chain.getHandler() instanceof HandlerMethod handler
						&& RateLimitedMethods.isAnnotated(handler.getMethod(), handler.getBeanType());
			}
		}
		return false;
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
