package dev.ratelimit.spring.docs;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.password.PasswordEncoder;

import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.testsupport.CountingPasswordEncoder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.httpBasic;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The example {@code before-security} of docs/CONFIGURATION.md, read from the doc: ten
 * wrong HTTP Basic passwords from one address, then a 429 before Spring Security checks
 * another (the right one too); requests without credentials are not limited by it.
 */
@SpringBootTest(classes = BeforeSecurityDocsTests.BasicApplication.class)
@AutoConfigureMockMvc
class BeforeSecurityDocsTests {

	@DynamicPropertySource
	static void beforeSecurityExample(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "docs/CONFIGURATION.md", "before-security");
	}

	@Autowired
	private MockMvc mvc;

	@Autowired
	private CountingPasswordEncoder encoder;

	@Test
	void tenWrongPasswordsThenA429BeforeSpringSecurityChecksAnother() throws Exception {
		int before = this.encoder.checks();
		for (int i = 0; i < 10; i++) {
			hello("guess-" + i).andExpect(status().isUnauthorized());
		}
		hello("secret").andExpect(status().isTooManyRequests());
		assertThat(this.encoder.checks() - before).isEqualTo(10);
		// a request without credentials is not counted, nor refused by it
		this.mvc.perform(get("/public")).andExpect(status().isOk());
	}

	private ResultActions hello(String password) throws Exception {
		return this.mvc.perform(get("/hello").with(httpBasic("user", password)));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(HelloController.class)
	static class BasicApplication {

		@Bean
		CountingPasswordEncoder passwordEncoder() {
			return new CountingPasswordEncoder();
		}

		@Bean
		UserDetailsService users(PasswordEncoder encoder) {
			return new InMemoryUserDetailsManager(
					User.withUsername("user").password(encoder.encode("secret")).roles("USER").build());
		}

		@Bean
		SecurityFilterChain basic(HttpSecurity http) throws Exception {
			return http.httpBasic((basic) -> {
			})
				.authorizeHttpRequests(
						(requests) -> requests.requestMatchers("/public").permitAll().anyRequest().authenticated())
				.build();
		}

	}

	@RestController
	static class HelloController {

		@GetMapping({ "/hello", "/public" })
		String hello() {
			return "hello";
		}

	}

}
