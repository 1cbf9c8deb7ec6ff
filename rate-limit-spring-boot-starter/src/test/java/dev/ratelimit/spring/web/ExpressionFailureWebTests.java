package dev.ratelimit.spring.web;

import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.CountingRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Cost and key expressions that cannot be evaluated for a request, in filter rules and in {@code @RateLimited}
 * handler methods alike: the request's fault is answered 400 with a problem that says which policy and why, and
 * charges nothing (the next request still sees every permit, and the backend is not even asked); the application's
 * fault is an error of the application. Each test uses its own client key.
 */
@SpringBootTest(
		classes = { WebTestApplication.class, RateLimitWebTests.CountingLimiter.class,
				ExpressionFailureWebTests.ExpressionHandlers.class },
		properties = { "ratelimit.policies.priced.key=header:X-Client",
				"ratelimit.policies.priced.limits[0].rate=10/1m",
				"ratelimit.policies.tenant.key=#{#request.getHeader('X-Tenant').toLowerCase()}",
				"ratelimit.policies.tenant.limits[0].rate=10/1m", "ratelimit.policies.gate.key=header:X-Client",
				"ratelimit.policies.gate.limits[0].rate=10/1m",
				// these filters replace the profile's
				"ratelimit.filters[0].patterns=/api/expr/filter/cost", "ratelimit.filters[0].policies=priced",
				"ratelimit.filters[0].cost=#{#request.getParameter('n')}",
				"ratelimit.filters[1].patterns=/api/expr/filter/parsed", "ratelimit.filters[1].policies=priced",
				"ratelimit.filters[1].cost=#{T(java.lang.Long).parseLong(#request.getParameter('n'))}",
				"ratelimit.filters[2].patterns=/api/expr/filter/key", "ratelimit.filters[2].policies=tenant",
				"ratelimit.filters[3].patterns=/api/expr/filter/faulty", "ratelimit.filters[3].policies=priced",
				"ratelimit.filters[3].cost=#{@pricing.costOf(#request)}",
				"ratelimit.filters[4].patterns=/api/expr/annotated/**", "ratelimit.filters[4].policies=gate",
				"ratelimit.filters[5].patterns=/api/expr/tenant-batch", "ratelimit.filters[5].policies=tenant",
				"logging.level.dev.ratelimit.spring.web.RateLimitExceptionHandler=debug" })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
@ExtendWith(OutputCaptureExtension.class)
class ExpressionFailureWebTests {

	private static final String FILTER_COST = "The cost expression of the filter for policy priced could not be"
			+ " evaluated for this request: ";

	private static final String ANNOTATION_COST = "The cost expression of policy priced could not be evaluated for"
			+ " this request: ";

	@Autowired
	private MockMvc mvc;

	@Autowired
	private CountingRateLimiter limiter;

	@ParameterizedTest(name = "{0}?n={1}")
	@CsvSource(delimiter = '|', textBlock = """
			/api/expr/filter/cost     |     | it evaluated to null
			/api/expr/filter/cost     | abc | it is not a whole number
			/api/expr/filter/cost     | -5  | it is negative
			/api/expr/filter/cost     | 2.5 | it is not a whole number
			/api/expr/annotated/cost  |     | it evaluated to null
			/api/expr/annotated/cost  | abc | it is not a whole number
			/api/expr/annotated/cost  | -5  | it is negative
			""")
	void answersACostThatIsNotAWholeNumberOfPermitsWith400AndChargesNothing(String path, String n, String reason)
			throws Exception {
		String client = "cost " + path + " " + n;
		String detail = (path.contains("annotated") ? ANNOTATION_COST : FILTER_COST) + reason;
		int before = this.limiter.acquires();
		assertBadRequest(this.mvc.perform(withN(get(path).header("X-Client", client), n)), path, detail)
			.andExpect(content().string(not(containsString("abc"))))
			.andExpect(content().string(not(containsString("-5"))))
			.andExpect(content().string(not(containsString("2.5"))));
		assertThat(this.limiter.acquires()).isEqualTo(before);
		this.mvc.perform(get(path).param("n", "1").header("X-Client", client))
			.andExpect(status().isOk())
			.andExpect(header().string("X-RateLimit-Limit", "10"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
	}

	@ParameterizedTest(name = "n={0}")
	@CsvSource(delimiter = '|', textBlock = """
			abc
			''
			""")
	void answersACostExpressionThatThrowsOnTheRequestsValueWith400AndChargesNothing(String n) throws Exception {
		// Long.parseLong throws NumberFormatException, which SpEL lets through unwrapped
		String client = "parsed " + n;
		int before = this.limiter.acquires();
		assertBadRequest(this.mvc.perform(get("/api/expr/filter/parsed").param("n", n).header("X-Client", client)),
				"/api/expr/filter/parsed",
				FILTER_COST + "a value it reads from this request does not have the expected form");
		assertThat(this.limiter.acquires()).isEqualTo(before);
		this.mvc.perform(get("/api/expr/filter/parsed").param("n", "1").header("X-Client", client))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"priced\";r=9;t=6"));
	}

	@Test
	void answersAFilterKeyExpressionThatDereferencesAMissingHeaderWith400AndChargesNothing() throws Exception {
		int before = this.limiter.acquires();
		assertBadRequest(this.mvc.perform(get("/api/expr/filter/key")), "/api/expr/filter/key",
				"The key expression of policy tenant could not be evaluated for this request: it reads a value that"
						+ " this request does not have");
		assertThat(this.limiter.acquires()).isEqualTo(before);
		this.mvc.perform(get("/api/expr/filter/key").header("X-Tenant", "Acme"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"tenant\";r=9;t=6"));
		assertThat(this.limiter.lastLimits()).singleElement()
			.satisfies((limit) -> assertThat(limit.key()).isEqualTo("expr:acme"));
	}

	@Test
	void answersAnAnnotationKeyExpressionWhoseBeanThrowsNullPointerExceptionWith400AndChargesNothing()
			throws Exception {
		int before = this.limiter.acquires();
		assertBadRequest(this.mvc.perform(get("/api/expr/annotated/key").header("X-Client", "annotated-key")),
				"/api/expr/annotated/key",
				"The key expression of policy priced could not be evaluated for this request: it reads a value that"
						+ " this request does not have");
		assertThat(this.limiter.acquires()).isEqualTo(before);
		this.mvc.perform(get("/api/expr/annotated/key").header("X-Client", "annotated-key").header("X-Tenant", "Acme"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"gate\";q=10;w=60, \"priced\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
	}

	@Test
	void answersAFilterKeyExpressionThatFailsWith400AlsoWhenTheAnnotatedHandlerWouldNotRun() throws Exception {
		// the body does not bind, so the filter decides its policy after all: its key fails as it would have up front
		int before = this.limiter.acquires();
		assertBadRequest(this.mvc.perform(post("/api/expr/tenant-batch").contentType(MediaType.APPLICATION_JSON)
			.content("not json")), "/api/expr/tenant-batch",
				"The key expression of policy tenant could not be evaluated for this request: it reads a value that"
						+ " this request does not have");
		assertThat(this.limiter.acquires()).isEqualTo(before);
	}

	@Test
	void logsTheExpressionAndTheExceptionAtDebugLevel(CapturedOutput output) throws Exception {
		this.mvc.perform(get("/api/expr/filter/cost").param("n", "-7").header("X-Client", "logged"))
			.andExpect(status().isBadRequest());
		assertThat(output).contains("Answered 400: Rate-limit cost expression #{#request.getParameter('n')} of the"
				+ " filter for policy priced could not be evaluated for this call: it is negative")
			.contains(RateLimitEvaluationException.class.getName());
	}

	@Test
	void leavesAnExpressionThatFailsForTheApplicationsOwnReasonsAServerError() throws Exception {
		int before = this.limiter.acquires();
		assertThatException()
			.isThrownBy(() -> this.mvc.perform(get("/api/expr/filter/faulty").header("X-Client", "faulty")))
			.isInstanceOf(IllegalStateException.class)
			.withMessage("the pricing service is down");
		assertThat(this.limiter.acquires()).isEqualTo(before);
	}

	@Test
	void leavesAnExpressionThatIsWrongForEveryRequestAServerError() throws Exception {
		assertThatException()
			.isThrownBy(() -> this.mvc.perform(get("/api/expr/annotated/typo").header("X-Client", "typo")))
			.havingRootCause()
			.withMessageContaining("Method call: Method lenght() cannot be found");
	}

	private static ResultActions assertBadRequest(ResultActions result, String path, String detail)
			throws Exception {
		return result.andExpect(status().isBadRequest())
			.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(header().doesNotExist("X-RateLimit-Remaining"))
			.andExpect(jsonPath("$.title").value("Bad Request"))
			.andExpect(jsonPath("$.status").value(400))
			.andExpect(jsonPath("$.detail").value(detail))
			.andExpect(jsonPath("$.instance").value(path));
	}

	private static MockHttpServletRequestBuilder withN(MockHttpServletRequestBuilder request, String n) {
		return (n != null) ? request.param("n", n) : request;
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ExpressionHandlers {

		@Bean
		Pricing pricing() {
			return new Pricing();
		}

		@Bean
		Tenants tenants() {
			return new Tenants();
		}

		@Bean
		ExpressionController expressionController() {
			return new ExpressionController();
		}

	}

	static class Pricing {

		public long costOf(HttpServletRequest request) {
			throw new IllegalStateException("the pricing service is down");
		}

	}

	static class Tenants {

		public String of(String tenant) {
			return tenant.toLowerCase();
		}

	}

	@RestController
	static class ExpressionController {

		@GetMapping({ "/api/expr/filter/cost", "/api/expr/filter/parsed", "/api/expr/filter/key",
				"/api/expr/filter/faulty" })
		String filtered() {
			return "ok";
		}

		@GetMapping("/api/expr/annotated/cost")
		@RateLimited(policy = "priced", cost = "#{#n}")
		String annotatedCost(@RequestParam(required = false) String n) {
			return "ok";
		}

		@GetMapping("/api/expr/annotated/key")
		@RateLimited(policy = "priced", key = "#{@tenants.of(#tenant)}")
		String annotatedKey(@RequestHeader(name = "X-Tenant", required = false) String tenant) {
			return "ok";
		}

		@PostMapping("/api/expr/tenant-batch")
		@RateLimited("priced")
		List<String> tenantBatch(@RequestBody List<String> queries) {
			return queries;
		}

		@GetMapping("/api/expr/annotated/typo")
		@RateLimited(policy = "priced", cost = "#{#request.getHeader('X-Client').lenght()}")
		String annotatedTypo() {
			return "ok";
		}

	}

}
