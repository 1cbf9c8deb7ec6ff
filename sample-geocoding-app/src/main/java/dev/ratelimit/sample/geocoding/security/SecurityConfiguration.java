package dev.ratelimit.sample.geocoding.security;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.AnonymousAuthenticationFilter;

import dev.ratelimit.spring.PolicyRegistry;

/**
 * API callers authenticate with {@code X-API-Key}; the API itself is open to anonymous
 * callers (who get the anonymous tier). The actuator's view of one client
 * ({@code /actuator/ratelimits/POLICY/CLIENT}) and the per-client overrides
 * ({@code /actuator/ratelimitoverrides}) need the operator's credentials. The overview,
 * and the health status without its details, stay open.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ApiKeyProperties.class)
public class SecurityConfiguration {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http, ApiKeyProperties properties, JsonMapper jsonMapper,
			@Value("${ratelimit.client.api-key-header:X-API-Key}") String apiKeyHeader,
			ObjectProvider<PolicyRegistry> policies) {
		// a key whose tier no policy defines would get the anonymous limits: fail
		// start-up instead
		policies.ifAvailable((registry) -> properties.checkTiers(registry));
		http.csrf((csrf) -> csrf.disable())
			.sessionManagement((session) -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
			.httpBasic(Customizer.withDefaults())
			.addFilterBefore(new ApiKeyAuthenticationFilter(properties, jsonMapper, apiKeyHeader),
					AnonymousAuthenticationFilter.class)
			.authorizeHttpRequests((requests) -> requests
				// the overview shows the configuration only
				.requestMatchers(HttpMethod.GET, "/actuator/ratelimits")
				.permitAll()
				// one client's state tells anyone, unthrottled, whether a guessed API key
				// is in use; its reset lifts
				// its limits. Health details are the operator's too
				// (show-details=when-authorized).
				.requestMatchers("/actuator/ratelimits/**")
				.hasRole("OPERATOR")
				// overrides raise a client's limits, and their list names clients: the
				// operator's alone
				.requestMatchers("/actuator/ratelimitoverrides", "/actuator/ratelimitoverrides/**")
				.hasRole("OPERATOR")
				.anyRequest()
				.permitAll());
		return http.build();
	}

	@Bean
	PasswordEncoder passwordEncoder() {
		return PasswordEncoderFactories.createDelegatingPasswordEncoder();
	}

	@Bean
	UserDetailsService operators(ApiKeyProperties properties, PasswordEncoder encoder) {
		return new InMemoryUserDetailsManager(User.withUsername(properties.getOperator().getUsername())
			.password(encoder.encode(properties.getOperator().getPassword()))
			.roles("OPERATOR")
			.build());
	}

}
