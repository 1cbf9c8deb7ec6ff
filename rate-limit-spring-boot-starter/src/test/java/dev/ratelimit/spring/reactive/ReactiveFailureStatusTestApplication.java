package dev.ratelimit.spring.reactive;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.crypto.password.PasswordEncoder;

import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ResponseStatusException;

import dev.ratelimit.spring.testsupport.CountingPasswordEncoder;

/**
 * A WebFlux application whose requests fail in each of the ways a real application's do,
 * for the {@code count-if} tests: an error signal that Spring Security answers (401 for
 * an anonymous caller denied, 403 for a signed-in one), one an {@code @ExceptionHandler}
 * answers, and ones that only a {@code WebExceptionHandler}, outside every web filter,
 * answers (a {@code ResponseStatusException}, an error nobody handles). HTTP Basic for
 * user {@code user} (password {@link #PASSWORD}), whose password checks are counted.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import({ ReactiveFailureStatusTestApplication.FailingController.class,
		ReactiveFailureStatusTestApplication.Advice.class })
class ReactiveFailureStatusTestApplication {

	static final String PASSWORD = "right-password";

	@Bean
	CountingPasswordEncoder passwordEncoder() {
		return new CountingPasswordEncoder();
	}

	@Bean
	MapReactiveUserDetailsService users(PasswordEncoder encoder) {
		return new MapReactiveUserDetailsService(
				User.withUsername("user").password(encoder.encode(PASSWORD)).roles("USER").build());
	}

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.csrf(ServerHttpSecurity.CsrfSpec::disable).httpBasic((basic) -> {
		})
			.authorizeExchange((
					exchanges) -> exchanges.pathMatchers("/secured/basic/**").authenticated().anyExchange().permitAll())
			.build();
	}

	@RestController
	static class FailingController {

		@GetMapping("/fail/denied")
		Mono<String> denied() {
			return Mono.error(new AccessDeniedException("not for you"));
		}

		@GetMapping("/fail/advice")
		Mono<String> advised() {
			return Mono.error(new IllegalArgumentException("answered by the advice"));
		}

		@GetMapping("/fail/status")
		Mono<String> status() {
			return Mono.error(new ResponseStatusException(HttpStatus.CONFLICT, "a conflict"));
		}

		@GetMapping("/fail/unhandled")
		Mono<String> unhandled() {
			return Mono.error(new IllegalStateException("nobody handles this"));
		}

		@GetMapping("/secured/basic/hello")
		Mono<String> hello() {
			return Mono.just("hello");
		}

	}

	@RestControllerAdvice
	static class Advice {

		@ExceptionHandler(IllegalArgumentException.class)
		@ResponseStatus(HttpStatus.UNPROCESSABLE_CONTENT)
		Mono<String> unprocessable(IllegalArgumentException ex) {
			return Mono.just(ex.getMessage());
		}

	}

}
