package dev.ratelimit.spring.countif;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.authentication.AuthenticationManager;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ProviderManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.authentication.dao.DaoAuthenticationProvider;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.password.PasswordEncoder;

import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import dev.ratelimit.spring.testsupport.CountingPasswordEncoder;

/**
 * A servlet application whose requests fail in each of the ways a real application's do,
 * for the {@code count-if} tests: an exception that Spring Security answers (401 from a
 * login through the {@code AuthenticationManager}, 403 for a signed-in user denied), one
 * an {@code @ExceptionHandler} answers, a {@code ResponseStatusException}, one nobody
 * handles (the container's 500 and {@code /error}), and asynchronous answers
 * ({@code DeferredResult}, {@code Callable}, {@code StreamingResponseBody}, SSE). HTTP
 * Basic for user {@code user} (password {@link #PASSWORD}), whose password checks are
 * counted.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import({ FailureStatusTestApplication.FailingController.class, FailureStatusTestApplication.Advice.class })
class FailureStatusTestApplication {

	static final String PASSWORD = "right-password";

	@Bean
	CountingPasswordEncoder passwordEncoder() {
		return new CountingPasswordEncoder();
	}

	@Bean
	UserDetailsService users(PasswordEncoder encoder) {
		return new InMemoryUserDetailsManager(
				User.withUsername("user").password(encoder.encode(PASSWORD)).roles("USER").build());
	}

	@Bean
	AuthenticationManager authenticationManager(UserDetailsService users, PasswordEncoder encoder) {
		DaoAuthenticationProvider provider = new DaoAuthenticationProvider(users);
		provider.setPasswordEncoder(encoder);
		return new ProviderManager(provider);
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.csrf((csrf) -> csrf.disable()).httpBasic((basic) -> {
		})
			.authorizeHttpRequests(
					(requests) -> requests.requestMatchers("/secured/**").authenticated().anyRequest().permitAll())
			.build();
	}

	@RestController
	static class FailingController {

		private final AuthenticationManager authentication;

		private volatile CountDownLatch gate = new CountDownLatch(0);

		final AtomicInteger arrived = new AtomicInteger();

		FailingController(AuthenticationManager authentication) {
			this.authentication = authentication;
		}

		/**
		 * Makes the next gated logins wait until the test opens the gate.
		 */
		void closeGate() {
			this.arrived.set(0);
			this.gate = new CountDownLatch(1);
		}

		void openGate() {
			this.gate.countDown();
		}

		@PostMapping("/login")
		String login(@RequestParam String username, @RequestParam String password) {
			// a wrong password throws BadCredentialsException, which Spring Security's
			// ExceptionTranslationFilter answers 401, outside the rate-limit filter
			this.authentication.authenticate(new UsernamePasswordAuthenticationToken(username, password));
			return "welcome " + username;
		}

		@PostMapping("/login/gated")
		String gatedLogin(@RequestParam String username, @RequestParam String password) throws InterruptedException {
			this.arrived.incrementAndGet();
			if (!this.gate.await(20, TimeUnit.SECONDS)) {
				throw new IllegalStateException("the gate was never opened");
			}
			return login(username, password);
		}

		@GetMapping("/secured/basic/hello")
		String hello() {
			return "hello";
		}

		@GetMapping("/secured/whoami")
		String whoami(java.security.Principal principal) {
			return principal.getName();
		}

		@GetMapping("/secured/denied")
		String denied() {
			throw new AccessDeniedException("not for you");
		}

		@GetMapping("/fail/advice")
		String advised() {
			throw new IllegalArgumentException("answered by the advice");
		}

		@GetMapping("/fail/status")
		String status() {
			throw new ResponseStatusException(HttpStatus.CONFLICT, "a conflict");
		}

		@GetMapping("/fail/unhandled")
		String unhandled() {
			throw new IllegalStateException("nobody handles this");
		}

		@GetMapping("/fail/sent")
		void sent(HttpServletResponse response) throws IOException {
			response.sendError(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
		}

		@GetMapping("/ok")
		String ok() {
			return "ok";
		}

		@GetMapping("/async/deferred")
		DeferredResult<String> deferred() {
			DeferredResult<String> result = new DeferredResult<>();
			new Thread(() -> result.setErrorResult(new ResponseStatusException(HttpStatus.GONE))).start();
			return result;
		}

		@GetMapping("/async/deferred-unhandled")
		DeferredResult<String> deferredUnhandled() {
			DeferredResult<String> result = new DeferredResult<>();
			new Thread(() -> result.setErrorResult(new IllegalStateException("nobody handles this"))).start();
			return result;
		}

		@GetMapping("/async/callable")
		Callable<String> callable() {
			return () -> {
				throw new IllegalStateException("nobody handles this");
			};
		}

		@GetMapping("/async/streaming")
		ResponseEntity<StreamingResponseBody> streaming() {
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED)
				.body((out) -> out.write("denied, in a stream".getBytes(StandardCharsets.UTF_8)));
		}

		@GetMapping(path = "/async/sse", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		ResponseEntity<SseEmitter> sse() {
			SseEmitter emitter = new SseEmitter();
			new Thread(() -> {
				try {
					emitter.send("denied");
					emitter.complete();
				}
				catch (IOException ex) {
					emitter.completeWithError(ex);
				}
			}).start();
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(emitter);
		}

	}

	@RestControllerAdvice
	static class Advice {

		@ExceptionHandler(IllegalArgumentException.class)
		@ResponseStatus(HttpStatus.UNPROCESSABLE_CONTENT)
		String unprocessable(IllegalArgumentException ex) {
			return ex.getMessage();
		}

	}

}
