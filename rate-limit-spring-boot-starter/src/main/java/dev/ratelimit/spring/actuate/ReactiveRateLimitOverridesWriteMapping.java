package dev.ratelimit.spring.actuate;

import java.util.Objects;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebHandler;

/**
 * Serves {@code POST} to the {@code ratelimitoverrides} endpoint over HTTP in a WebFlux
 * application, as {@link RateLimitOverridesWriteMapping} does in a servlet one: the same
 * path, the same JSON, the same answers. It reads the body without blocking, at most
 * {@code 64 KiB} of it, and sets the override on a thread that may block, since the store
 * may be remote. Every other method goes on to the actuator's own mapping. Like the
 * servlet one, it belongs where the actuator's mappings are.
 */
public final class ReactiveRateLimitOverridesWriteMapping implements HandlerMapping, Ordered, WebHandler {

	private final OverridesWrite write;

	/**
	 * Creates the mapping.
	 * @param endpoint the endpoint
	 * @param path the endpoint's path within the actuator's server, such as
	 * {@code /actuator/ratelimitoverrides}
	 */
	public ReactiveRateLimitOverridesWriteMapping(RateLimitOverridesEndpoint endpoint, String path) {
		this.write = new OverridesWrite(endpoint, path);
	}

	@Override
	public int getOrder() {
		return OverridesWrite.ORDER;
	}

	@Override
	public Mono<Object> getHandler(ServerWebExchange exchange) {
		return (selectors(exchange.getRequest()) != null) ? Mono.just(this) : Mono.empty();
	}

	private String @Nullable [] selectors(ServerHttpRequest request) {
		return this.write.selectors(request.getMethod().name(), request.getPath().pathWithinApplication().value());
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange) {
		String[] selectors = Objects.requireNonNull(selectors(exchange.getRequest()));
		return DataBufferUtils
			.join(DataBufferUtils.takeUntilByteCount(exchange.getRequest().getBody(),
					OverridesWrite.MAX_BODY_BYTES + 1L))
			.map(ReactiveRateLimitOverridesWriteMapping::bytes)
			.defaultIfEmpty(new byte[0])
			.publishOn(Schedulers.boundedElastic())
			.map((body) -> this.write.apply(selectors, body))
			.flatMap((answer) -> answer(exchange.getResponse(), answer));
	}

	private static byte[] bytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

	private static Mono<Void> answer(ServerHttpResponse response, WebEndpointResponse<Object> answer) {
		response.setStatusCode(HttpStatusCode.valueOf(answer.getStatus()));
		Object body = answer.getBody();
		if (body == null) {
			return response.setComplete();
		}
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(OverridesWrite.json(body))));
	}

}
