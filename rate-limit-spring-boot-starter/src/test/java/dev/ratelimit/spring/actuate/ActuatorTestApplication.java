package dev.ratelimit.spring.actuate;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.testsupport.MutableTimeSource;

/**
 * A small web application for the actuator tests: an API behind the rate-limit filter, a
 * clock that stands still, and Spring Security letting everyone in except to the
 * endpoint's delete operation, which needs an operator.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(ActuatorTestApplication.ApiController.class)
class ActuatorTestApplication {

	static final String OPERATOR = "operator";

	static final String OPERATOR_PASSWORD = "test-secret";

	@Bean
	MutableTimeSource timeSource() {
		return new MutableTimeSource();
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.csrf((csrf) -> csrf.disable())
			.httpBasic(Customizer.withDefaults())
			.authorizeHttpRequests((requests) -> requests.requestMatchers(HttpMethod.DELETE, "/actuator/ratelimits/**")
				.hasRole("OPERATOR")
				.anyRequest()
				.permitAll())
			.build();
	}

	@Bean
	UserDetailsService operators() {
		return new InMemoryUserDetailsManager(
				User.withUsername(OPERATOR).password("{noop}" + OPERATOR_PASSWORD).roles("OPERATOR").build());
	}

	@RestController
	static class ApiController {

		@GetMapping({ "/api/geocode", "/api/counted" })
		String ok() {
			return "ok";
		}

	}

}
