package dev.ratelimit.spring.runtime;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

import dev.ratelimit.spring.testsupport.MutableTimeSource;

/**
 * A web application whose actuator is meant for another port: Spring Security guards the
 * actuator's endpoints with {@link EndpointRequest#toAnyEndpoint()}, so that only an
 * operator may call any of them, and lets everyone call everything else, as a team that
 * moves the actuator to an internal port writes it (the example
 * {@code management-port-security} of docs/OBSERVABILITY.md). An API behind the
 * rate-limit filter and a clock that moves only when a test moves it.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(RuntimeTestApplication.ApiController.class)
class ManagementPortTestApplication {

	@Bean
	MutableTimeSource timeSource() {
		return new MutableTimeSource();
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		http.csrf((csrf) -> csrf.disable())
			.httpBasic(Customizer.withDefaults())
			.authorizeHttpRequests((requests) -> requests.requestMatchers(EndpointRequest.toAnyEndpoint())
				.hasRole("OPERATOR")
				.anyRequest()
				.permitAll());
		return http.build();
	}

	@Bean
	UserDetailsService operators() {
		return new InMemoryUserDetailsManager(User.withUsername(RuntimeTestApplication.OPERATOR)
			.password("{noop}" + RuntimeTestApplication.OPERATOR_PASSWORD)
			.roles("OPERATOR")
			.build());
	}

}
