package dev.ratelimit.spring.docs;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The failed-login limits of docs/CONFIGURATION.md (example {@code count-if}), read from
 * the doc: successful logins never count, five failures per username then a 429 even with
 * the right password, and five per address over any usernames.
 */
@SpringBootTest(classes = CountIfDocsTests.LoginApplication.class,
		properties = "ratelimit.client.trusted-proxies=127.0.0.1")
@AutoConfigureMockMvc
class CountIfDocsTests {

	@DynamicPropertySource
	static void countIfExample(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "docs/CONFIGURATION.md", "count-if");
	}

	@Autowired
	private MockMvc mvc;

	@Test
	void fiveFailedLoginsPerUsernameThenA429EvenWithTheRightPassword() throws Exception {
		for (int i = 0; i < 10; i++) {
			login("198.51.100.1", "alice", "secret").andExpect(status().isOk());
		}
		for (int i = 0; i < 5; i++) {
			login("198.51.100.1", "alice", "guess").andExpect(status().isUnauthorized());
		}
		login("198.51.100.2", "alice", "secret").andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$.violated-policies[0]").value("login-by-user"));
	}

	@Test
	void fiveFailedLoginsPerAddressOverAnyUsernames() throws Exception {
		for (int i = 0; i < 5; i++) {
			login("198.51.100.3", "user-" + i, "guess").andExpect(status().isUnauthorized());
		}
		login("198.51.100.3", "someone-else", "secret").andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$.violated-policies[0]").value("login-by-ip"));
	}

	private ResultActions login(String address, String username, String password) throws Exception {
		return this.mvc.perform(post("/login").param("username", username)
			.param("password", password)
			.header("X-Forwarded-For", address));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(LoginController.class)
	static class LoginApplication {

		@Bean
		SecurityFilterChain permitAll(HttpSecurity http) throws Exception {
			return http.csrf((csrf) -> csrf.disable())
				.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.build();
		}

	}

	@RestController
	static class LoginController {

		@PostMapping("/login")
		ResponseEntity<String> login(@RequestParam String username, @RequestParam String password) {
			return "secret".equals(password) ? ResponseEntity.ok("welcome")
					: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("wrong password");
		}

	}

}
