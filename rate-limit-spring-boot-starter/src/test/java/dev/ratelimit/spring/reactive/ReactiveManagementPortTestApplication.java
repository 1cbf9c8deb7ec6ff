package dev.ratelimit.spring.reactive;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.reactive.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.testsupport.MutableTimeSource;

/**
 * A WebFlux application whose actuator is meant for another port: Spring Security guards
 * the actuator's endpoints with {@link EndpointRequest#toAnyEndpoint()}, so that only an
 * operator may call any of them, and lets everyone call everything else. An API behind
 * the rate-limit web filter and a clock that moves only when a test moves it. Served on
 * Netty.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
// the test class path holds Tomcat too, for the servlet tests; a WebFlux application on
// Netty has none, and both would define the factory of the management port's context
@EnableAutoConfiguration(
		excludeName = "org.springframework.boot.tomcat.autoconfigure.actuate.web.server.TomcatReactiveManagementContextAutoConfiguration")
class ReactiveManagementPortTestApplication {

	static final String OPERATOR = "operator";

	static final String OPERATOR_PASSWORD = "test-secret";

	@Bean
	MutableTimeSource timeSource() {
		return new MutableTimeSource();
	}

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http
			.authorizeExchange((exchanges) -> exchanges.matchers(EndpointRequest.toAnyEndpoint())
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

		@GetMapping("/api/things")
		Mono<String> ok() {
			return Mono.just("ok");
		}

	}

}
