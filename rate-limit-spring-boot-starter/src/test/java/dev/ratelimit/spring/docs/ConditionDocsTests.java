package dev.ratelimit.spring.docs;

import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The conditions of the docs: the filters of docs/CONFIGURATION.md (example
 * {@code conditions}), read from the doc, exempt the addresses of an allow-list bean and
 * limit only the CSV exports of a path; the annotation of docs/ANNOTATION.md (example
 * {@code annotation-when}) never limits the admin.
 */
@SpringBootTest(classes = ConditionDocsTests.ReportsApplication.class)
@AutoConfigureMockMvc
class ConditionDocsTests {

	@DynamicPropertySource
	static void conditionsExample(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "docs/CONFIGURATION.md", "conditions");
		registry.add("ratelimit.policies.per-user.limits[0].rate", () -> "2/1m");
	}

	@Autowired
	private MockMvc mvc;

	@Autowired
	private History history;

	@Test
	void theDocShowsTheAnnotationOfThisClass() {
		assertThat(DocExamples.codeMissingFrom(ConditionDocsTests.class, "docs/ANNOTATION.md", "annotation-when"))
			.isEmpty();
	}

	@Test
	void callersThatTheAllowListBeanNamesAreNotLimited() throws Exception {
		for (int i = 0; i < 150; i++) {
			this.mvc.perform(from("10.0.0.5", get("/api/geocode").header("X-API-Key", "internal")))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit-Policy"));
		}
	}

	@Test
	void otherCallersAreLimitedByTheApiPolicy() throws Exception {
		for (int i = 0; i < 100; i++) {
			this.mvc.perform(from("203.0.113.7", get("/api/geocode").header("X-API-Key", "outside")))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"api\";q=100;w=60"));
		}
		this.mvc.perform(from("203.0.113.7", get("/api/geocode").header("X-API-Key", "outside")))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void onlyCsvExportsCountAgainstTheExportsPolicy() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc
				.perform(from("203.0.113.8",
						get("/api/reports/sales").param("format", "pdf").header("X-API-Key", "reporter")))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"api\";q=100;w=60"));
		}
		for (int i = 0; i < 5; i++) {
			this.mvc
				.perform(from("203.0.113.8",
						get("/api/reports/sales").param("format", "csv").header("X-API-Key", "reporter")))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"api\";q=100;w=60, \"exports\";q=5;w=3600"));
		}
		this.mvc
			.perform(from("203.0.113.8",
					get("/api/reports/sales").param("format", "csv").header("X-API-Key", "reporter")))
			.andExpect(status().isTooManyRequests());
		this.mvc
			.perform(from("203.0.113.8",
					get("/api/reports/sales").param("format", "pdf").header("X-API-Key", "reporter")))
			.andExpect(status().isOk());
	}

	@Test
	void theAnnotationNeverLimitsTheAdmin() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.history.history("admin")).isEqualTo("history of admin");
		}
		this.history.history("42");
		this.history.history("42");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.history.history("42"));
	}

	private static MockHttpServletRequestBuilder from(String address, MockHttpServletRequestBuilder request) {
		return request.with((built) -> {
			built.setRemoteAddr(address);
			return built;
		});
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ReportsController.class)
	static class ReportsApplication {

		@Bean
		MutableTimeSource timeSource() {
			return new MutableTimeSource();
		}

		@Bean
		Set<String> internalCallers() {
			return Set.of("10.0.0.5");
		}

		@Bean
		History history() {
			return new History();
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class ReportsController {

		@GetMapping({ "/api/geocode", "/api/reports/sales" })
		String ok() {
			return "ok";
		}

	}

	static class History {

		@RateLimited(policy = "per-user", key = "#{#userId}", when = "#{#userId != 'admin'}")
		public String history(String userId) {
			return "history of " + userId;
		}

	}

}
