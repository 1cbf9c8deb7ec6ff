package dev.ratelimit.spring.web.reactive;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.spring.annotation.RateLimitedMethods;

/**
 * Finds whether the handler method of an exchange is a {@code @RateLimited} method that
 * returns a publisher, whose interceptor then decides the filter's policies with its own
 * in one decision. It reads the request mappings without the handler mappings' side
 * effects (CORS headers, exchange attributes): the best matching mapping, as WebFlux
 * picks it. An application with no such method pays one check per request.
 */
final class AnnotatedHandlers {

	private final Supplier<List<RequestMappingHandlerMapping>> mappings;

	private final Supplier<@Nullable RateLimitedMethods> methods;

	private volatile @Nullable List<Map<RequestMappingInfo, HandlerMethod>> snapshot;

	private volatile boolean anyAnnotated = true;

	AnnotatedHandlers(Supplier<List<RequestMappingHandlerMapping>> mappings,
			Supplier<@Nullable RateLimitedMethods> methods) {
		this.mappings = mappings;
		this.methods = methods;
	}

	/**
	 * Returns whether the exchange's handler method is a reactive {@code @RateLimited}
	 * method.
	 */
	boolean isRateLimitedHandler(ServerWebExchange exchange) {
		if (!this.anyAnnotated) {
			return false;
		}
		RateLimitedMethods methods = this.methods.get();
		List<Map<RequestMappingInfo, HandlerMethod>> snapshot = snapshot(methods);
		if (methods == null || !this.anyAnnotated) {
			return false;
		}
		for (Map<RequestMappingInfo, HandlerMethod> handlers : snapshot) {
			RequestMappingInfo best = null;
			HandlerMethod bestHandler = null;
			for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : handlers.entrySet()) {
				RequestMappingInfo match = entry.getKey().getMatchingCondition(exchange);
				if (match != null && (best == null || match.compareTo(best, exchange) < 0)) {
					best = match;
					bestHandler = entry.getValue();
				}
			}
			if (bestHandler != null) {
				// the first handler mapping with a match handles the exchange
				return isReactiveRateLimited(methods, bestHandler);
			}
		}
		return false;
	}

	private List<Map<RequestMappingInfo, HandlerMethod>> snapshot(@Nullable RateLimitedMethods methods) {
		List<Map<RequestMappingInfo, HandlerMethod>> snapshot = this.snapshot;
		if (snapshot == null) {
			// the mappings are registered at start-up; read once, on the first request
			List<Map<RequestMappingInfo, HandlerMethod>> read = new ArrayList<>();
			boolean any = false;
			for (RequestMappingHandlerMapping mapping : this.mappings.get()) {
				Map<RequestMappingInfo, HandlerMethod> handlers = Map.copyOf(mapping.getHandlerMethods());
				read.add(handlers);
				for (HandlerMethod handler : handlers.values()) {
					any |= methods != null && isReactiveRateLimited(methods, handler);
				}
			}
			snapshot = List.copyOf(read);
			this.anyAnnotated = any;
			this.snapshot = snapshot;
		}
		return snapshot;
	}

	private static boolean isReactiveRateLimited(RateLimitedMethods methods, HandlerMethod handler) {
		Method method = handler.getMethod();
		if (!RateLimitedMethods.isAnnotated(method, handler.getBeanType())) {
			return false;
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(method.getReturnType());
		return adapter != null && adapter.getDescriptor().isDeferred();
	}

}
