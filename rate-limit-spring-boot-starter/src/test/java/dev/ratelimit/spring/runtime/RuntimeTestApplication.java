package dev.ratelimit.spring.runtime;

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
 * A small web application for the run-time change tests: an API behind the rate-limit
 * filter, a clock that moves only when a test moves it, and Spring Security that lets
 * everyone call the API and read the endpoints, but lets only an operator change
 * overrides or refresh the configuration.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(RuntimeTestApplication.ApiController.class)
class RuntimeTestApplication {

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
			.authorizeHttpRequests((requests) -> requests.requestMatchers(HttpMethod.GET, "/actuator/**")
				.permitAll()
				.requestMatchers("/actuator/**")
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

		@GetMapping("/api/things")
		String ok() {
			return "ok";
		}

	}

}
