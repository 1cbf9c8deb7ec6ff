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
 * picks it. A request that no such method's mapping matches pays one match per such
 * method; an application with none pays nothing.
 */
final class AnnotatedHandlers {

	private final Supplier<List<RequestMappingHandlerMapping>> mappings;

	private final Supplier<@Nullable RateLimitedMethods> methods;

	private volatile @Nullable Snapshot snapshot;

	AnnotatedHandlers(Supplier<List<RequestMappingHandlerMapping>> mappings,
			Supplier<@Nullable RateLimitedMethods> methods) {
		this.mappings = mappings;
		this.methods = methods;
	}

	/**
	 * The request mappings, read once on the first request (they are registered at
	 * start-up): each handler mapping's, and the mappings of reactive
	 * {@code @RateLimited} methods among them.
	 */
	private record Snapshot(List<Map<RequestMappingInfo, HandlerMethod>> handlers,
			List<RequestMappingInfo> rateLimited) {

	}

	/**
	 * Returns whether the exchange's handler method is a reactive {@code @RateLimited}
	 * method: only if one of their mappings matches the exchange are all mappings
	 * compared, to find the one WebFlux picks.
	 */
	boolean isRateLimitedHandler(ServerWebExchange exchange) {
		Snapshot snapshot = snapshot();
		if (snapshot.rateLimited().isEmpty() || !anyMatches(snapshot.rateLimited(), exchange)) {
			return false;
		}
		RateLimitedMethods methods = this.methods.get();
		for (Map<RequestMappingInfo, HandlerMethod> handlers : snapshot.handlers()) {
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
				return methods != null && isReactiveRateLimited(bestHandler);
			}
		}
		return false;
	}

	private static boolean anyMatches(List<RequestMappingInfo> mappings, ServerWebExchange exchange) {
		for (RequestMappingInfo mapping : mappings) {
			if (mapping.getMatchingCondition(exchange) != null) {
				return true;
			}
		}
		return false;
	}

	private Snapshot snapshot() {
		Snapshot snapshot = this.snapshot;
		if (snapshot == null) {
			List<Map<RequestMappingInfo, HandlerMethod>> handlers = new ArrayList<>();
			List<RequestMappingInfo> rateLimited = new ArrayList<>();
			boolean annotations = this.methods.get() != null;
			for (RequestMappingHandlerMapping mapping : this.mappings.get()) {
				Map<RequestMappingInfo, HandlerMethod> read = Map.copyOf(mapping.getHandlerMethods());
				handlers.add(read);
				read.forEach((info, handler) -> {
					if (annotations && isReactiveRateLimited(handler)) {
						rateLimited.add(info);
					}
				});
			}
			snapshot = new Snapshot(List.copyOf(handlers), List.copyOf(rateLimited));
			this.snapshot = snapshot;
		}
		return snapshot;
	}

	private static boolean isReactiveRateLimited(HandlerMethod handler) {
		Method method = handler.getMethod();
		if (!RateLimitedMethods.isAnnotated(method, handler.getBeanType())) {
			return false;
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(method.getReturnType());
		return adapter != null && adapter.getDescriptor().isDeferred();
	}

}
