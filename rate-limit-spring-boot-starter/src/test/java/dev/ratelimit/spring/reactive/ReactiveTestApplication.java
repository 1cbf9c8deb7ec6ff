package dev.ratelimit.spring.reactive;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.MutableTimeSource;
import dev.ratelimit.spring.testsupport.RecordingListener;

/**
 * A WebFlux application for the reactive tests: filter rules and {@code @RateLimited}
 * handlers returning {@code Mono} and {@code Flux}, with Spring Security's reactive HTTP
 * Basic (users {@code paid} and {@code free}, password {@code secret}, each with a
 * {@code TIER_} authority) and anonymous callers allowed. Served on Netty.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class ReactiveTestApplication {

	static final String PASSWORD = "secret";

	@Bean
	MutableTimeSource timeSource() {
		return new MutableTimeSource();
	}

	@Bean
	RecordingListener listener() {
		return new RecordingListener();
	}

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
			.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.httpBasic((basic) -> {
			})
			.build();
	}

	@Bean
	MapReactiveUserDetailsService users() {
		return new MapReactiveUserDetailsService(
				User.withUsername("paid").password("{noop}" + PASSWORD).authorities("TIER_PAID").build(),
				User.withUsername("free").password("{noop}" + PASSWORD).authorities("TIER_FREE").build());
	}

	@RestController
	static class TestController {

		@GetMapping({ "/api/geocode", "/api/fleet", "/api/plans", "/api/ip", "/api/observed", "/api/smooth" })
		Mono<String> ok() {
			return Mono.just("ok");
		}

		@GetMapping("/api/weighted")
		@RateLimited(policy = "weighted", cost = "#{#n}")
		Mono<String> weighted(@RequestParam long n) {
			return Mono.just("weighted " + n);
		}

		@GetMapping("/api/exchange")
		@RateLimited(policy = "weighted", cost = "#{#exchange.request.queryParams.getFirst('n')}")
		Mono<String> exchange() {
			return Mono.just("exchange");
		}

		@GetMapping("/api/merged")
		@RateLimited(policy = "quotes", cost = "2")
		Mono<String> merged() {
			return Mono.just("merged");
		}

		@GetMapping("/api/login")
		Mono<ResponseEntity<String>> login(@RequestParam String password) {
			return Mono.just(PASSWORD.equals(password) ? ResponseEntity.ok("welcome")
					: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no"));
		}

		@GetMapping(path = "/api/stream/{client}", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		@RateLimited(policy = "in-flight", key = "#{#client}")
		Flux<Long> stream(@PathVariable String client) {
			return Flux.interval(Duration.ofMillis(20)).onBackpressureDrop();
		}

	}

	/**
	 * A service whose limited methods return publishers, or an ordinary value, called
	 * outside any web request.
	 */
	@Service
	static class Quotes {

		private final AtomicInteger invocations = new AtomicInteger();

		@RateLimited(policy = "quotes", key = "#{#client}")
		Mono<String> quote(String client) {
			this.invocations.incrementAndGet();
			return Mono.just("quote for " + client);
		}

		@RateLimited(policy = "quotes-in-flight", key = "#{#client}")
		Mono<String> failing(String client) {
			return Mono.error(new IllegalStateException("no quote for " + client));
		}

		@RateLimited(policy = "quotes-in-flight", key = "#{#client}")
		Flux<String> several(String client) {
			return Flux.just("a", "b", "c");
		}

		@RateLimited(policy = "quotes", key = "#{#client}")
		String ordinary(String client) {
			return "ordinary quote for " + client;
		}

		int invocations() {
			return this.invocations.get();
		}

	}

}
