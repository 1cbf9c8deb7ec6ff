package dev.ratelimit.spring.reactive;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

/**
 * A WebFlux application for the actuator tests of a reactive application: an API behind
 * the rate-limit web filter and a {@code @RateLimited} handler returning a {@code Mono},
 * a clock that moves only when a test moves it, and Spring Security's reactive HTTP Basic
 * letting everyone call the API and read the endpoints, but only an operator reset a
 * client or change an override. Served on Netty.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class ReactiveActuatorTestApplication {

	static final String OPERATOR = "operator";

	static final String OPERATOR_PASSWORD = "test-secret";

	@Bean
	MutableTimeSource timeSource() {
		return new MutableTimeSource();
	}

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http
			.authorizeExchange((exchanges) -> exchanges.pathMatchers(HttpMethod.GET, "/actuator/**")
				.permitAll()
				.pathMatchers("/actuator/**")
				.hasRole("OPERATOR")
				.anyExchange()
				.permitAll())
			.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.httpBasic((basic) -> {
			})
			.build();
	}

	@Bean
	MapReactiveUserDetailsService operators() {
		return new MapReactiveUserDetailsService(
				User.withUsername(OPERATOR).password("{noop}" + OPERATOR_PASSWORD).roles("OPERATOR").build());
	}

	@RestController
	static class ApiController {

		@GetMapping({ "/api/geocode", "/api/counted", "/api/things", "/api/reloaded" })
		Mono<String> ok() {
			return Mono.just("ok");
		}

		@GetMapping("/api/annotated")
		@RateLimited(policy = "annotated")
		Mono<String> annotated() {
			return Mono.just("annotated");
		}

	}

}
