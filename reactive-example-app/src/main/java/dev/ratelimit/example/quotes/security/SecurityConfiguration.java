package dev.ratelimit.example.quotes.security;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;

import dev.ratelimit.spring.PolicyRegistry;

/**
 * API callers authenticate with {@code X-API-Key}; the API itself is open to anonymous
 * callers, who get the anonymous tier. One client's state in the actuator
 * ({@code /actuator/ratelimits/POLICY/CLIENT}) and its reset need the operator's
 * credentials; the overview, and the health status without its details, stay open.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ApiKeyProperties.class)
public class SecurityConfiguration {

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http, ApiKeyProperties properties,
			JsonMapper jsonMapper, @Value("${ratelimit.client.api-key-header:X-API-Key}") String apiKeyHeader,
			ObjectProvider<PolicyRegistry> policies) {
		// a key whose tier no policy defines would get the anonymous limits: fail
		// start-up
		// instead
		policies.ifAvailable(properties::checkTiers);
		AuthenticationWebFilter apiKeys = new AuthenticationWebFilter(new ApiKeyAuthenticationManager(properties));
		apiKeys.setServerAuthenticationConverter(new ApiKeyAuthenticationConverter(apiKeyHeader));
		apiKeys.setAuthenticationFailureHandler(new UnknownApiKeyHandler(jsonMapper, apiKeyHeader));
		return http.csrf(ServerHttpSecurity.CsrfSpec::disable).httpBasic((basic) -> {
		})
			.addFilterAt(apiKeys, SecurityWebFiltersOrder.AUTHENTICATION)
			.authorizeExchange((exchanges) -> exchanges
				// the overview shows the configuration only
				.pathMatchers(HttpMethod.GET, "/actuator/ratelimits")
				.permitAll()
				// one client's state tells anyone, unthrottled, whether a guessed API key
				// is
				// in use; its reset lifts its limits
				.pathMatchers("/actuator/ratelimits/**")
				.hasRole("OPERATOR")
				.anyExchange()
				.permitAll())
			.build();
	}

	@Bean
	MapReactiveUserDetailsService operators(ApiKeyProperties properties) {
		PasswordEncoder encoder = PasswordEncoderFactories.createDelegatingPasswordEncoder();
		return new MapReactiveUserDetailsService(User.withUsername(properties.getOperator().getUsername())
			.password(encoder.encode(properties.getOperator().getPassword()))
			.roles("OPERATOR")
			.build());
	}

}
