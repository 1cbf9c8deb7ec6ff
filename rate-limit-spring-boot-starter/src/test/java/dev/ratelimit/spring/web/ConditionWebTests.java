package dev.ratelimit.spring.web;

import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.actuate.FilterDescriptor;
import dev.ratelimit.spring.actuate.RateLimitsEndpoint;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.CountingRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Conditions ({@code when}) on filter rules and on {@code @RateLimited}: a rule or
 * annotation applies only to the calls for which its condition is true; for the others it
 * charges nothing and adds no headers, while other rules still apply. A condition that
 * cannot be evaluated for a request is a 400 naming its rule, with nothing charged,
 * unless it serves shadow policies only. Each test uses its own client key.
 */
@SpringBootTest(
		classes = { WebTestApplication.class, RateLimitWebTests.CountingLimiter.class,
				ConditionWebTests.Conditions.class },
		properties = { "ratelimit.policies.api.key=header:X-Client", "ratelimit.policies.api.limits[0].rate=10/1m",
				"ratelimit.policies.backend.key=header:X-Client", "ratelimit.policies.backend.limits[0].rate=100/1m",
				"ratelimit.policies.trial.key=header:X-Client", "ratelimit.policies.trial.shadow=true",
				"ratelimit.policies.trial.limits[0].rate=10/1m", "ratelimit.policies.per-user.key=header:X-Client",
				"ratelimit.policies.per-user.limits[0].rate=3/1m",
				// these filters replace the profile's
				"ratelimit.filters[0].patterns=/api/cond/external", "ratelimit.filters[0].policies=api",
				"ratelimit.filters[0].when=#{#request.getHeader('X-Internal') == null}",
				"ratelimit.filters[1].patterns=/api/cond/allow-list", "ratelimit.filters[1].policies=api",
				"ratelimit.filters[1].when=#{!@internalCallers.contains(#request.remoteAddr)}",
				"ratelimit.filters[2].patterns=/api/cond/flag", "ratelimit.filters[2].policies=api",
				"ratelimit.filters[2].when=#{#request.getHeader('X-Flag')}",
				"ratelimit.filters[3].patterns=/api/cond/throws", "ratelimit.filters[3].policies=api",
				"ratelimit.filters[3].when=#{#request.getHeader('X-Flag').isEmpty()}",
				// the same path twice: a conditional rule beside one for every request
				"ratelimit.filters[4].patterns=/api/cond/both", "ratelimit.filters[4].policies=api",
				"ratelimit.filters[4].when=#{#request.getHeader('X-Internal') == null}",
				"ratelimit.filters[5].patterns=/api/cond/both", "ratelimit.filters[5].policies=backend",
				// a shadow rule whose condition fails: skipped, as a shadow cost is
				"ratelimit.filters[6].patterns=/api/cond/shadow", "ratelimit.filters[6].policies=trial",
				"ratelimit.filters[6].when=#{#request.getHeader('X-Flag').isEmpty()}",
				"ratelimit.filters[7].patterns=/api/cond/shadow", "ratelimit.filters[7].policies=backend",
				"ratelimit.filters[8].patterns=/api/cond/never", "ratelimit.filters[8].policies=api",
				"ratelimit.filters[8].when=false", "management.endpoints.web.exposure.include=ratelimits" })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
class ConditionWebTests {

	private static final String FILTER_CONDITION = "The condition expression of the filter for policy api could not"
			+ " be evaluated for this request: ";

	@Autowired
	private MockMvc mvc;

	@Autowired
	private CountingRateLimiter limiter;

	@Autowired
	private RateLimitsEndpoint endpoint;

	@Test
	void aTrueConditionAppliesTheRuleAndAFalseOneSkipsItChargingNothing() throws Exception {
		this.mvc.perform(get("/api/cond/external").header("X-Client", "external"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"api\";r=9;t=6"));
		int before = this.limiter.acquires();
		for (int i = 0; i < 20; i++) {
			this.mvc.perform(get("/api/cond/external").header("X-Client", "external").header("X-Internal", "yes"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit"))
				.andExpect(header().doesNotExist("RateLimit-Policy"))
				.andExpect(header().doesNotExist("X-RateLimit-Remaining"));
		}
		assertThat(this.limiter.acquires()).isEqualTo(before);
		assertThat(remaining("api", "external")).isEqualTo(9);
		this.mvc.perform(get("/api/cond/external").header("X-Client", "external"))
			.andExpect(header().string("X-RateLimit-Remaining", "8"));
	}

	@Test
	void anAllowListBeanExemptsItsCallers() throws Exception {
		for (int i = 0; i < 15; i++) {
			this.mvc.perform(get("/api/cond/allow-list").header("X-Client", "allowed").with(from("10.1.2.3")))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit"));
		}
		assertThat(remaining("api", "allowed")).isEqualTo(10);
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/cond/allow-list").header("X-Client", "outsider").with(from("192.0.2.9")))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/cond/allow-list").header("X-Client", "outsider").with(from("192.0.2.9")))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void aConditionMayGiveTheTextTrueOrFalse() throws Exception {
		this.mvc.perform(get("/api/cond/flag").header("X-Client", "text").header("X-Flag", "TRUE"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		this.mvc.perform(get("/api/cond/flag").header("X-Client", "text").header("X-Flag", " false "))
			.andExpect(status().isOk())
			.andExpect(header().doesNotExist("X-RateLimit-Remaining"));
		assertThat(remaining("api", "text")).isEqualTo(9);
	}

	@ParameterizedTest(name = "X-Flag: {0}")
	@CsvSource(delimiter = '|', nullValues = "none", textBlock = """
			/api/cond/flag   | maybe | it is neither true nor false
			/api/cond/flag   | none  | it evaluated to null
			/api/cond/throws | none  | it reads a value that this request does not have
			""")
	void answersAConditionThatCannotBeEvaluatedWith400NamingTheRuleAndChargesNothing(String path, String flag,
			String reason) throws Exception {
		String client = "failing " + path + " " + flag;
		int before = this.limiter.acquires();
		MockHttpServletRequestBuilder request = get(path).header("X-Client", client);
		if (flag != null) {
			request.header("X-Flag", flag);
		}
		assertBadRequest(this.mvc.perform(request), path, FILTER_CONDITION + reason)
			.andExpect(content().string(org.hamcrest.Matchers.not(org.hamcrest.Matchers.containsString("X-Flag"))));
		assertThat(this.limiter.acquires()).isEqualTo(before);
		assertThat(remaining("api", client)).isEqualTo(10);
	}

	@Test
	void otherRulesOfTheRequestStillApplyWhenAConditionIsFalse() throws Exception {
		this.mvc.perform(get("/api/cond/both").header("X-Client", "both"))
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=60, \"backend\";q=100;w=60"));
		this.mvc.perform(get("/api/cond/both").header("X-Client", "both").header("X-Internal", "yes"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"backend\";q=100;w=60"));
		assertThat(remaining("api", "both")).isEqualTo(9);
		assertThat(remaining("backend", "both")).isEqualTo(98);
	}

	@Test
	void aShadowRuleWhoseConditionCannotBeEvaluatedIsSkipped() throws Exception {
		this.mvc.perform(get("/api/cond/shadow").header("X-Client", "shadow"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"backend\";q=100;w=60"));
		assertThat(remaining("trial", "shadow")).isEqualTo(10);
		this.mvc.perform(get("/api/cond/shadow").header("X-Client", "shadow").header("X-Flag", ""))
			.andExpect(status().isOk());
		assertThat(remaining("trial", "shadow")).isEqualTo(9);
	}

	@Test
	void aConstantFalseConditionNeverAppliesTheRule() throws Exception {
		this.mvc.perform(get("/api/cond/never").header("X-Client", "never"))
			.andExpect(status().isOk())
			.andExpect(header().doesNotExist("RateLimit"));
	}

	@Test
	void anAnnotationAppliesOnlyWhenItsConditionOverAMethodArgumentHolds() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/cond/users/admin").header("X-Client", "annotated-admin"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit"));
		}
		assertThat(remaining("per-user", "annotated-admin")).isEqualTo(3);
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/cond/users/alice").header("X-Client", "annotated-alice"))
				.andExpect(status().isOk())
				.andExpect(header().string("X-RateLimit-Remaining", Integer.toString(2 - i)));
		}
		this.mvc.perform(get("/api/cond/users/alice").header("X-Client", "annotated-alice"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void answersAnAnnotationsConditionThatCannotBeEvaluatedWith400NamingItsPolicy() throws Exception {
		int before = this.limiter.acquires();
		assertBadRequest(this.mvc.perform(get("/api/cond/annotated-throws").header("X-Client", "annotated-throws")),
				"/api/cond/annotated-throws", "The condition expression of policy per-user could not be evaluated"
						+ " for this request: it reads a value that this request does not have");
		assertThat(this.limiter.acquires()).isEqualTo(before);
		assertThat(remaining("per-user", "annotated-throws")).isEqualTo(3);
	}

	@Test
	void theEndpointShowsEachFiltersCondition() {
		assertThat(this.endpoint.rateLimits().filters()).extracting(FilterDescriptor::when)
			.containsExactly("#{#request.getHeader('X-Internal') == null}",
					"#{!@internalCallers.contains(#request.remoteAddr)}", "#{#request.getHeader('X-Flag')}",
					"#{#request.getHeader('X-Flag').isEmpty()}", "#{#request.getHeader('X-Internal') == null}", null,
					"#{#request.getHeader('X-Flag').isEmpty()}", null, "false");
	}

	@Test
	void theEndpointsJsonLeavesOutTheConditionOfAFilterWithoutOne() throws Exception {
		this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.filters[0].when").value("#{#request.getHeader('X-Internal') == null}"))
			.andExpect(jsonPath("$.filters[5].when").doesNotExist());
	}

	private long remaining(String policy, String client) {
		return this.endpoint.key(policy, client, null).limits().get(0).remaining();
	}

	private static org.springframework.test.web.servlet.request.RequestPostProcessor from(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

	private static ResultActions assertBadRequest(ResultActions result, String path, String detail) throws Exception {
		return result.andExpect(status().isBadRequest())
			.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(header().doesNotExist("X-RateLimit-Remaining"))
			.andExpect(jsonPath("$.status").value(400))
			.andExpect(jsonPath("$.detail").value(detail))
			.andExpect(jsonPath("$.instance").value(path));
	}

	@TestConfiguration(proxyBeanMethods = false)
	@Import(ConditionController.class)
	static class Conditions {

		@Bean
		Set<String> internalCallers() {
			return Set.of("10.1.2.3", "10.1.2.4");
		}

	}

	@RestController
	static class ConditionController {

		@GetMapping({ "/api/cond/external", "/api/cond/allow-list", "/api/cond/flag", "/api/cond/throws",
				"/api/cond/both", "/api/cond/shadow", "/api/cond/never" })
		String ok() {
			return "ok";
		}

		@GetMapping("/api/cond/users/{userId}")
		@RateLimited(policy = "per-user", when = "#{#userId != 'admin'}")
		String user(@PathVariable String userId) {
			return userId;
		}

		@GetMapping("/api/cond/annotated-throws")
		@RateLimited(policy = "per-user", when = "#{#request.getHeader('X-Flag').isEmpty()}")
		String annotatedThrows() {
			return "ok";
		}

	}

}
