package dev.ratelimit.spring.docs;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.httpBasic;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * How docs/OBSERVABILITY.md exposes the {@code ratelimits} endpoint (example
 * {@code exposure}, read from the doc) and secures one client's state (example
 * {@code endpoint-security}, whose code this class holds): the overview is open, reading
 * or resetting one client needs the operator, and without the operator nothing changes.
 */
@SpringBootTest(classes = EndpointSecurityDocsTests.OperatedApplication.class,
		properties = { "ratelimit.policies.api.key=api-key", "ratelimit.policies.api.limits[0].rate=10/1h",
				"ratelimit.filters[0].patterns=/api/**", "ratelimit.filters[0].policies=api" })
@AutoConfigureMockMvc
class EndpointSecurityDocsTests {

	@DynamicPropertySource
	static void exposure(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "docs/OBSERVABILITY.md", "exposure");
	}

	@Autowired
	private MockMvc mvc;

	@Test
	void theDocShowsTheSecurityConfigurationOfThisClass() {
		assertThat(DocExamples.codeMissingFrom(EndpointSecurityDocsTests.class, "docs/OBSERVABILITY.md",
				"endpoint-security"))
			.isEmpty();
	}

	@Test
	void theExposedEndpointsAnswerOverHttp() throws Exception {
		this.mvc.perform(get("/actuator/ratelimits")).andExpect(status().isOk());
		this.mvc.perform(get("/actuator/health")).andExpect(status().isOk());
		this.mvc.perform(get("/actuator/metrics")).andExpect(status().isOk());
		this.mvc.perform(get("/actuator/prometheus")).andExpect(status().isOk());
	}

	@Test
	void anyoneReadsTheOverviewButOnlyTheOperatorReadsOrResetsOneClient() throws Exception {
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/geocode").header("X-API-Key", "spent")).andExpect(status().isOk());
		}
		this.mvc.perform(get("/actuator/ratelimits")).andExpect(status().isOk());
		this.mvc.perform(get("/actuator/ratelimits/api/spent")).andExpect(status().isUnauthorized());
		this.mvc.perform(delete("/actuator/ratelimits/api/spent")).andExpect(status().isUnauthorized());
		this.mvc.perform(get("/actuator/ratelimits/api/spent").with(operator()))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.limits[0].remaining").value(7));
		this.mvc.perform(delete("/actuator/ratelimits/api/spent").with(operator())).andExpect(status().isNoContent());
		this.mvc.perform(get("/actuator/ratelimits/api/spent").with(operator()))
			.andExpect(jsonPath("$.limits[0].remaining").value(10));
	}

	private static org.springframework.test.web.servlet.request.RequestPostProcessor operator() {
		return httpBasic("operator", "change-me");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ApiController.class)
	static class OperatedApplication {

		@Bean
		MutableTimeSource timeSource() {
			return new MutableTimeSource();
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			http.csrf((csrf) -> csrf.disable())
				.httpBasic(Customizer.withDefaults())
				.authorizeHttpRequests((requests) -> requests.requestMatchers(HttpMethod.GET, "/actuator/ratelimits")
					.permitAll()
					.requestMatchers("/actuator/ratelimits/**")
					.hasRole("OPERATOR")
					.anyRequest()
					.permitAll());
			return http.build();
		}

		@Bean
		UserDetailsService operators() {
			return new InMemoryUserDetailsManager(
					User.withUsername("operator").password("{noop}change-me").roles("OPERATOR").build());
		}

	}

	@RestController
	static class ApiController {

		@GetMapping("/api/geocode")
		String geocode() {
			return "ok";
		}

	}

}
