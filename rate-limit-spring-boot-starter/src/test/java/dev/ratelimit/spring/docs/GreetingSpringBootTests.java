package dev.ratelimit.spring.docs;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.docs.DocExamples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The {@code @SpringBootTest} example of docs/TESTING.md (example
 * {@code spring-boot-test}): a filter rule's limit exhausted, then passed by advancing a
 * {@link ManualTimeSource} instead of sleeping, and every limit reset after each test, so
 * that the two tests, which spend the same client's permits, pass in either order.
 */
@SpringBootTest(
		properties = { "ratelimit.policies.greetings.key=ip", "ratelimit.policies.greetings.limits[0].rate=2/1m",
				"ratelimit.filters[0].patterns=/greetings", "ratelimit.filters[0].policies=greetings" })
@AutoConfigureMockMvc
class GreetingSpringBootTests {

	@TestConfiguration
	static class RateLimitClock {

		@Bean
		ManualTimeSource rateLimitClock() {
			return new ManualTimeSource();
		}

	}

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	RateLimiter rateLimiter;

	@AfterEach
	void resetRateLimits() {
		this.rateLimiter.resetAll();
	}

	@Test
	void aThirdGreetingWaitsHalfAMinuteForItsPermit() throws Exception {
		this.mvc.perform(get("/greetings")).andExpect(status().isOk());
		this.mvc.perform(get("/greetings")).andExpect(status().isOk());
		this.mvc.perform(get("/greetings"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "30"));
		this.clock.advance(Duration.ofSeconds(30));
		this.mvc.perform(get("/greetings")).andExpect(status().isOk());
	}

	@Test
	void eachTestStartsWithEveryLimitFull() throws Exception {
		this.mvc.perform(get("/greetings")).andExpect(header().string("RateLimit", "\"greetings\";r=1;t=30"));
	}

	@Test
	void theDocShowsThisClass() {
		assertThat(DocExamples.codeMissingFrom(GreetingSpringBootTests.class, "docs/TESTING.md", "spring-boot-test"))
			.isEmpty();
	}

	/**
	 * The application under test; in yours, the {@code @SpringBootApplication} that
	 * {@code @SpringBootTest} finds.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(GreetingController.class)
	static class GreetingApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			// Spring Security is on the starter's test class path
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll()).build();
		}

	}

}
