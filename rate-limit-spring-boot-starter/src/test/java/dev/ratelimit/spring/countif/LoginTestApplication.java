package dev.ratelimit.spring.countif;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;

/**
 * A login for the {@code count-if} tests: {@code POST /login} answers 401 for a wrong
 * password and 200 for the right one; {@code POST /login/annotated} is the same under
 * {@code @RateLimited}; {@code POST /login/gated} fails every login once as many requests
 * as a test arms are in flight together.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(LoginTestApplication.LoginController.class)
class LoginTestApplication {

	static final String PASSWORD = "right";

	/** The settings of the canonical example, as in the docs. */
	static final String[] LOGIN_POLICIES = {
			"ratelimit.policies.login-by-user.key=#{#request.getParameter('username')}",
			"ratelimit.policies.login-by-user.count-if=#{#response.status == 401}",
			"ratelimit.policies.login-by-user.limits[0].algorithm=fixed-window",
			"ratelimit.policies.login-by-user.limits[0].rate=5/15m", "ratelimit.policies.login-by-ip.key=ip",
			"ratelimit.policies.login-by-ip.count-if=#{#response.status == 401}",
			"ratelimit.policies.login-by-ip.limits[0].algorithm=fixed-window",
			"ratelimit.policies.login-by-ip.limits[0].rate=50/15m", "ratelimit.filters[0].patterns=/login,/login/gated",
			"ratelimit.filters[0].methods=POST", "ratelimit.filters[0].policies=login-by-user,login-by-ip" };

	@Bean
	SecurityFilterChain permitAll(HttpSecurity http) throws Exception {
		return http.csrf((csrf) -> csrf.disable())
			.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.build();
	}

	@RestController
	static class LoginController {

		private volatile CountDownLatch inFlight = new CountDownLatch(0);

		/**
		 * Makes the next {@code count} gated logins wait until all of them are in flight.
		 */
		void arm(int count) {
			this.inFlight = new CountDownLatch(count);
		}

		@PostMapping("/login")
		ResponseEntity<String> login(@RequestParam String username, @RequestParam String password) {
			return PASSWORD.equals(password) ? ResponseEntity.ok("welcome " + username)
					: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("wrong password");
		}

		@PostMapping("/login/annotated")
		@RateLimited("login-by-user")
		ResponseEntity<String> annotatedLogin(@RequestParam String username, @RequestParam String password) {
			return login(username, password);
		}

		@PostMapping({ "/login/penalized", "/login/budget" })
		ResponseEntity<String> penalizedLogin(@RequestParam String username, @RequestParam String password) {
			return login(username, password);
		}

		@PostMapping({ "/login/gated", "/login/budget/gated" })
		ResponseEntity<String> gatedLogin(@RequestParam String username) throws InterruptedException {
			CountDownLatch latch = this.inFlight;
			latch.countDown();
			if (!latch.await(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("the requests were not all in flight together");
			}
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("wrong password");
		}

	}

}
