package dev.ratelimit.spring.docs;

import java.time.Duration;
import java.time.ZonedDateTime;

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
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.core.ManualTimeSource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The calendar quota of docs/ALGORITHMS.md (example {@code calendar-quota}), read from
 * the doc: 100,000 calls a calendar month in Paris, whose last minute of March ends in a
 * 429 with {@code Retry-After: 60}, and whose April starts afresh at midnight. A second
 * filter, on a path of its own, spends most of the month in one request.
 */
@SpringBootTest(classes = CalendarQuotaDocsTests.QuotaApplication.class,
		properties = { "ratelimit.filters[1].patterns=/bulk", "ratelimit.filters[1].policies=monthly",
				"ratelimit.filters[1].cost=#{#request.getParameter('n')}" })
@AutoConfigureMockMvc
class CalendarQuotaDocsTests {

	private static final ZonedDateTime LAST_MINUTE_OF_MARCH = ZonedDateTime.parse("2027-03-31T23:59:00+02:00");

	@DynamicPropertySource
	static void calendarQuotaExample(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "docs/ALGORITHMS.md", "calendar-quota");
		// in the same property source as the example's filter: Boot binds a list from one
		registry.add("ratelimit.filters[1].patterns", () -> "/bulk");
		registry.add("ratelimit.filters[1].policies", () -> "monthly");
		registry.add("ratelimit.filters[1].cost", () -> "#{#request.getParameter('n')}");
	}

	@Autowired
	private MockMvc mvc;

	@Autowired
	private ManualTimeSource clock;

	@Test
	void theLastCallOfTheMonthWaitsForMidnightInParis() throws Exception {
		this.mvc.perform(get("/bulk").param("n", "99999").header("X-API-Key", "customer")).andExpect(status().isOk());
		this.mvc.perform(get("/api/quota").header("X-API-Key", "customer"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"monthly\";q=100000;w=2629746"))
			.andExpect(header().string("RateLimit", "\"monthly\";r=0;t=60"));
		this.mvc.perform(get("/api/quota").header("X-API-Key", "customer"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "60"))
			.andExpect(header().string("RateLimit", "\"monthly\";r=0;t=60"));
		this.clock.advance(Duration.ofMinutes(1));
		this.mvc.perform(get("/api/quota").header("X-API-Key", "customer"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"monthly\";r=99999;t=" + Duration.ofDays(30).toSeconds()));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(QuotaController.class)
	static class QuotaApplication {

		@Bean
		ManualTimeSource timeSource() {
			return new ManualTimeSource(LAST_MINUTE_OF_MARCH.toEpochSecond() * 1_000_000L);
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class QuotaController {

		@GetMapping({ "/api/quota", "/bulk" })
		String quota() {
			return "ok";
		}

	}

}
