package dev.ratelimit.spring.docs;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.spring.autoconfigure.RateLimitAnnotationAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitWebAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The {@code @WebMvcTest} example of docs/TESTING.md (example {@code web-mvc-test}): the
 * slice does not include the starter's auto-configurations by itself, so the test imports
 * them; then a {@code @RateLimited} handler is limited as in the whole application, on a
 * clock the test advances.
 */
@WebMvcTest(GreetingController.class)
@ImportAutoConfiguration({ RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
		RateLimitAnnotationAutoConfiguration.class })
@TestPropertySource(
		properties = { "ratelimit.policies.greetings.key=ip", "ratelimit.policies.greetings.limits[0].rate=2/1m" })
class GreetingWebMvcTests {

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

	@BeforeEach
	void resetRateLimits() {
		this.rateLimiter.resetAll();
	}

	@Test
	void anAnnotatedHandlerIsLimitedInTheSlice() throws Exception {
		this.mvc.perform(get("/greetings/annotated")).andExpect(status().isOk());
		this.mvc.perform(get("/greetings/annotated")).andExpect(status().isOk());
		this.mvc.perform(get("/greetings/annotated"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "30"));
		this.clock.advance(Duration.ofSeconds(30));
		this.mvc.perform(get("/greetings/annotated"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"greetings\";r=0;t=60"));
	}

	@Test
	void theDocShowsThisClass() {
		assertThat(DocExamples.codeMissingFrom(GreetingWebMvcTests.class, "docs/TESTING.md", "web-mvc-test")).isEmpty();
	}

	/**
	 * What {@code @WebMvcTest} finds in place of an application's
	 * {@code @SpringBootApplication}: no auto-configuration of its own, so that the
	 * slice's apply; the controller, and a security chain that lets every request in
	 * (Spring Security is on the starter's test class path, and the slice applies it).
	 */
	@SpringBootConfiguration
	@Import(GreetingController.class)
	static class GreetingApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll()).build();
		}

	}

}
