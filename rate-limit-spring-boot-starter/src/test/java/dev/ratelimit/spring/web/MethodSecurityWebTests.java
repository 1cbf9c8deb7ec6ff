package dev.ratelimit.spring.web;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.security.config.annotation.method.configuration.EnableMethodSecurity;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.CountingRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.user;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A {@code @RateLimited} handler method behind Spring Security's method authorization
 * ({@code @PreAuthorize}), on a path that a filter also limits: a refused call never
 * reaches the annotation, so the filter's policies, deferred to that handler, are charged
 * as for any request whose handler method never runs, and a caller over their limit is
 * answered 429 rather than 403, or rather than the authentication challenge. Each test
 * uses its own client key.
 */
@SpringBootTest(
		classes = { WebTestApplication.class, RateLimitWebTests.CountingLimiter.class,
				MethodSecurityWebTests.SecuredHandlers.class },
		properties = { "ratelimit.policies.guarded.key=header:X-Client",
				"ratelimit.policies.guarded.limits[0].rate=2/1m",
				// this filter replaces the profile's
				"ratelimit.filters[0].patterns=/api/secured/**", "ratelimit.filters[0].policies=guarded" })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
class MethodSecurityWebTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private CountingRateLimiter limiter;

	@Test
	void chargesTheFiltersPoliciesOnceForACallThatMethodSecurityRefusesAndSaysSoInThe403() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(report("refused").with(user("reader")))
			.andExpect(status().isForbidden())
			.andExpect(header().string("RateLimit-Policy", "\"guarded\";q=2;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "1"));
		assertThat(this.limiter.acquires() - before).isOne();
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("guarded");
		// an authorized call decides the filter's policy and the annotation's together,
		// as usual
		this.mvc.perform(report("refused").with(user("admin").roles("ADMIN")))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"guarded\";q=2;w=60, \"batch\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "0"));
	}

	@Test
	void answersACallerOverTheFiltersLimitWith429RatherThan403() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(report("spent-reader").with(user("reader"))).andExpect(status().isForbidden());
		}
		this.mvc.perform(report("spent-reader").with(user("reader")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().exists("Retry-After"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("guarded"));
	}

	@Test
	void answersAnAnonymousCallerOverTheFiltersLimitWith429RatherThanTheAuthenticationChallenge() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(report("spent-anonymous"))
				.andExpect(status().isUnauthorized())
				.andExpect(header().exists("WWW-Authenticate"))
				.andExpect(header().exists("RateLimit"));
		}
		this.mvc.perform(report("spent-anonymous"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().doesNotExist("WWW-Authenticate"));
	}

	private static MockHttpServletRequestBuilder report(String client) {
		return get("/api/secured/report").header("X-Client", client);
	}

	@TestConfiguration(proxyBeanMethods = false)
	@EnableMethodSecurity
	static class SecuredHandlers {

		@Bean
		SecuredController securedController() {
			return new SecuredController();
		}

	}

	@RestController
	static class SecuredController {

		@GetMapping("/api/secured/report")
		@PreAuthorize("hasRole('ADMIN')")
		@RateLimited("batch")
		String report() {
			return "report";
		}

	}

}
