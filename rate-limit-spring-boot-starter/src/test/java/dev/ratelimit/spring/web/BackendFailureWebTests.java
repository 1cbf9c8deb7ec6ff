package dev.ratelimit.spring.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A backend that is down, with {@code on-backend-failure: deny}: requests get 503 with
 * Retry-After.
 */
@SpringBootTest(classes = { WebTestApplication.class, BackendFailureWebTests.DownBackend.class })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
class BackendFailureWebTests {

	@Autowired
	private MockMvc mvc;

	@Test
	void answersWith503AndRetryAfterWhenTheBackendIsDownAndTheModeIsDeny() throws Exception {
		this.mvc.perform(get("/api/geocode").header("X-API-Key", "any"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "2"))
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.status").value(503))
			.andExpect(jsonPath("$.title").value("Service Unavailable"))
			.andExpect(jsonPath("$.retryAfter").value(2))
			.andExpect(jsonPath("$.instance").value("/api/geocode"));
	}

	@Test
	void answersAnAnnotatedHandlerWith503Too() throws Exception {
		this.mvc.perform(get("/api/annotated-only"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "2"));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class DownBackend {

		@Bean
		RateLimiter unavailableRateLimiter() {
			return new RateLimiter() {

				@Override
				public Decision acquire(List<KeyedLimit> limits, long cost) {
					return Decision.unavailable(false, 1_500_000);
				}

				@Override
				public List<LimitStatus> inspect(List<KeyedLimit> limits) {
					return List.of();
				}

				@Override
				public void release(Decision decision) {
				}

				@Override
				public void reset(KeyedLimit limit) {
				}

			};
		}

	}

}
