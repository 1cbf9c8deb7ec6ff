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
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.spring.RateLimitEvaluationException;
import dev.ratelimit.spring.RateLimitOutcome;
import dev.ratelimit.spring.RateLimitResult;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.CountingRateLimiter;
import dev.ratelimit.spring.testsupport.RecordingListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Cost and key expressions that cannot be evaluated for a request, in filter rules and in
 * {@code @RateLimited} handler methods alike: the request's fault (SpEL meeting a missing
 * value, or a JDK method that the expression calls rejecting one) is answered 400 with a
 * problem that says which policy and why, and charges nothing (the next request still
 * sees every permit, and the backend is not even asked); the application's fault (its
 * bean failing, a cost of the wrong type, a service method's argument) is an error of the
 * application, and a filter's policies deferred to the handler are still charged. Shadow
 * policies never refuse a request: one that cannot be evaluated is skipped. Each test
 * uses its own client key.
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
				"ratelimit.filters[6].patterns=/api/expr/filter/bean-parsed", "ratelimit.filters[6].policies=priced",
				"ratelimit.filters[6].cost=#{@pricing.parse(#request.getParameter('n'))}",
				// shadow policies: one whose key reads a header, one whose filter's cost
				// reads a parameter
				"ratelimit.policies.trial.key=header:X-Client", "ratelimit.policies.trial.shadow=true",
				"ratelimit.policies.trial.limits[0].rate=10/1m",
				"ratelimit.policies.trial-tenant.key=#{#request.getHeader('X-Tenant').toLowerCase()}",
				"ratelimit.policies.trial-tenant.shadow=true", "ratelimit.policies.trial-tenant.limits[0].rate=10/1m",
				"ratelimit.filters[7].patterns=/api/expr/filter/shadow-key",
				"ratelimit.filters[7].policies=priced,trial-tenant",
				"ratelimit.filters[8].patterns=/api/expr/filter/shadow-cost", "ratelimit.filters[8].policies=priced",
				"ratelimit.filters[9].patterns=/api/expr/filter/shadow-c*", "ratelimit.filters[9].policies=trial",
				"ratelimit.filters[9].cost=#{#request.getParameter('n')}",
				"ratelimit.filters[10].patterns=/api/expr/filter/operator", "ratelimit.filters[10].policies=priced",
				"ratelimit.filters[10].cost=#{#request.getParameter('n') / 2}",
				"ratelimit.filters[11].patterns=/api/expr/filter/converted", "ratelimit.filters[11].policies=priced",
				"ratelimit.filters[11].cost=#{T(java.time.Duration).ofSeconds(#request.getParameter('n')).getSeconds()}",
				// a filter policy whose key bean fails, deferred to an annotated handler
				// of the service controller
				"ratelimit.policies.down.key=#{@tenants.directory(#request)}",
				"ratelimit.policies.down.limits[0].rate=10/1m",
				"ratelimit.filters[12].patterns=/api/expr/service/annotated", "ratelimit.filters[12].policies=down",
				// a shadow policy on trial whose key bean fails
				"ratelimit.policies.trial-down.key=#{@tenants.directory(#request)}",
				"ratelimit.policies.trial-down.shadow=true", "ratelimit.policies.trial-down.limits[0].rate=10/1m",
				"ratelimit.filters[13].patterns=/api/expr/filter/shadow-down",
				"ratelimit.filters[13].policies=priced,trial-down",
				"logging.level.dev.ratelimit.spring.web.RateLimitExceptionHandler=debug",
				"logging.level.dev.ratelimit.spring.RateLimitService=debug" })
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

	@Autowired
	private RecordingListener listener;

	@Autowired
	private TenantService tenantService;

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
	void answersAParameterThatSpelCannotConvertForAJdkMethodWith400AndChargesNothing() throws Exception {
		// SpEL converts the text to Duration.ofSeconds's long on the way in, and wraps
		// its own failure in the call's
		int before = this.limiter.acquires();
		assertBadRequest(
				this.mvc.perform(get("/api/expr/filter/converted").param("n", "abc").header("X-Client", "converted")),
				"/api/expr/filter/converted",
				FILTER_COST + "a value it reads from this request does not have the expected form");
		assertThat(this.limiter.acquires()).isEqualTo(before);
		this.mvc.perform(get("/api/expr/filter/converted").param("n", "2").header("X-Client", "converted"))
			.andExpect(status().isOk())
			.andExpect(header().string("X-RateLimit-Remaining", "8"));
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
	void answersAnAnnotationKeyExpressionWhoseStringMethodRejectsTheRequestsValueWith400AndChargesNothing()
			throws Exception {
		// String.substring throws StringIndexOutOfBoundsException: JDK code that the
		// expression calls itself
		int before = this.limiter.acquires();
		assertBadRequest(
				this.mvc
					.perform(get("/api/expr/annotated/jdk-key").header("X-Client", "jdk-key").header("X-Tenant", "ab")),
				"/api/expr/annotated/jdk-key",
				"The key expression of policy priced could not be evaluated for this request: a value it reads from"
						+ " this request does not have the expected form");
		assertThat(this.limiter.acquires()).isEqualTo(before);
		this.mvc.perform(get("/api/expr/annotated/jdk-key").header("X-Client", "jdk-key").header("X-Tenant", "Acme"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"gate\";q=10;w=60, \"priced\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.key())
			.containsExactly("header:jdk-key", "expr:acm");
	}

	@Test
	void leavesANullPointerExceptionOfABeanThatAKeyExpressionCallsAServerErrorAndChargesTheFilterOnce()
			throws Exception {
		// the bean dereferences the missing header itself: the exception is the
		// application's, whatever its type
		int before = this.limiter.acquires();
		assertThatException()
			.isThrownBy(() -> this.mvc.perform(get("/api/expr/annotated/key").header("X-Client", "annotated-key")))
			.withRootCauseInstanceOf(NullPointerException.class);
		// the request is not free: the filter's policy, left for the handler method, is
		// decided as if it never ran
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("gate");
		this.mvc.perform(get("/api/expr/annotated/key").header("X-Client", "annotated-key").header("X-Tenant", "Acme"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"gate\";q=10;w=60, \"priced\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "8"));
	}

	@Test
	void leavesAJdkExceptionThrownInsideABeanThatACostExpressionCallsAServerError() throws Exception {
		// Long.parseLong throws, but called by the application's bean, not by the
		// expression: the bean failed
		int before = this.limiter.acquires();
		assertThatException()
			.isThrownBy(() -> this.mvc
				.perform(get("/api/expr/filter/bean-parsed").param("n", "abc").header("X-Client", "bean-parsed")))
			.isInstanceOf(NumberFormatException.class);
		assertThat(this.limiter.acquires()).isEqualTo(before);
	}

	@Test
	void chargesTheFiltersDeferredPolicyOnceWhenAnAnnotationCostFailsForTheApplicationsOwnReasons() throws Exception {
		// the pricing bean fails (500): the handler's own decision is never made, but the
		// request is not free
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/expr/annotated/quoted").header("X-Client", "quoted"))
			.andExpect(status().isInternalServerError())
			.andExpect(content().string("pricing unavailable"))
			.andExpect(header().string("RateLimit-Policy", "\"gate\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("gate");
		this.mvc.perform(get("/api/expr/annotated/jdk-key").header("X-Client", "quoted").header("X-Tenant", "Acme"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"gate\";r=8;t=12"));
	}

	@Test
	void leavesACostThatIsNeitherANumberNorTextAServerErrorNamingTheExpression() throws Exception {
		// #queries where #queries.size() was meant: wrong for every request
		int before = this.limiter.acquires();
		assertThatException()
			.isThrownBy(() -> this.mvc.perform(post("/api/expr/annotated/forgot-size").header("X-Client", "forgot-size")
				.contentType(MediaType.APPLICATION_JSON)
				.content("[\"Rabat\",\"Fes\"]")))
			.havingRootCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("Rate-limit cost #{#queries} gave a java.util.ArrayList");
		// as for any failure of the application, the filter's policy is charged once
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
	}

	@Test
	void reportsAnExpressionThatCannotBeEvaluatedForAMethodOtherThanTheHandlerAsAnErrorOfTheApplication()
			throws Exception {
		// the service's argument comes from the application, which passed null: not the
		// client's fault
		int before = this.limiter.acquires();
		String message = "Rate-limit key expression #{#tenant.toLowerCase()} of policy priced could not be evaluated"
				+ " for this call: it reads a value that this request does not have";
		// the application's own advice answers it: the client's 400 is not in the
		// exception's causes to match first
		this.mvc.perform(get("/api/expr/service").header("X-Client", "service"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(content().string("handled by the application"));
		assertThatIllegalStateException().isThrownBy(() -> this.tenantService.lookup(null))
			.withMessage(message)
			.withCauseInstanceOf(SpelEvaluationException.class)
			.satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement()
				.isInstanceOf(RateLimitEvaluationException.class));
		assertThat(this.limiter.acquires()).isEqualTo(before);
		assertThat(this.tenantService.lookup("Acme")).isEqualTo("acme");
	}

	@Test
	void leavesAFailureOfTheFiltersDeferredPolicyToTheApplicationsOwnAdvice(CapturedOutput output) throws Exception {
		// the key bean of the filter's policy fails in the handler's decision, then again
		// when the filter's policy is
		// decided for a handler that never ran: the second failure is logged, and the
		// first reaches the application
		this.mvc.perform(get("/api/expr/service/annotated").header("X-Client", "directory"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(content().string("handled by the application"));
		assertThat(output).contains("the tenant directory is down");
	}

	@Test
	void skipsAShadowPolicyWhoseKeyBeanFailsAndDecidesTheEnforcedOnes(CapturedOutput output) throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/expr/filter/shadow-down").header("X-Client", "shadow-down"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"priced\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("priced");
		// an error of the application, which the trial should bring to light: logged at
		// WARN
		assertThat(output).contains("WARN")
			.contains("Did not decide shadow policy 'trial-down' for a call: its key or cost failed")
			.contains("the tenant directory is down");
	}

	@Test
	void skipsAShadowPolicyWhoseKeyCannotBeEvaluatedAndDecidesTheEnforcedOnes(CapturedOutput output) throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/expr/filter/shadow-key").header("X-Client", "shadow-key"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"priced\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("priced");
		assertThat(this.listener.last().outcomes()).containsOnlyKeys("priced");
		assertThat(output).contains("Did not decide shadow policy 'trial-tenant' for a call: Rate-limit key expression"
				+ " #{#request.getHeader('X-Tenant').toLowerCase()} of policy trial-tenant could not be evaluated");
		// with the header, the shadow policy is decided in a call of its own
		this.mvc.perform(get("/api/expr/filter/shadow-key").header("X-Client", "shadow-key").header("X-Tenant", "Acme"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"priced\";q=10;w=60, \"trial-tenant\";q=10;w=60"));
		assertThat(this.limiter.acquires()).isEqualTo(before + 3);
	}

	@Test
	void skipsTheShadowPoliciesOfAFilterWhoseCostCannotBeEvaluatedAndDecidesTheEnforcedOnes() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/expr/filter/shadow-cost").param("n", "abc").header("X-Client", "shadow-cost"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"priced\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("priced");
		this.mvc.perform(get("/api/expr/filter/shadow-cost").param("n", "2").header("X-Client", "shadow-cost"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"priced\";q=10;w=60, \"trial\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "8"));
		// the shadow rule's cost is the shadow policy's alone: the enforced rule costs 1
		RateLimitResult result = this.listener.last().result();
		assertThat(remaining(result.decision(), "priced")).isEqualTo(8);
		assertThat(remaining(result.shadowDecision(), "trial")).isEqualTo(8);
		assertThat(result.cost()).isEqualTo(1);
		assertThat(result.shadowCost()).isEqualTo(2);
	}

	@Test
	void aShadowFilterRuleWhoseCostNoLimitCanGrantNeverRefusesTheRequest() throws Exception {
		// charged to the enforced policy too, a cost of 11 against its 10 permits would
		// answer 429 (cost above capacity)
		this.mvc.perform(get("/api/expr/filter/shadow-cost").param("n", "11").header("X-Client", "shadow-cost-big"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"priced\";q=10;w=60, \"trial\";q=10;w=60"));
		RateLimitResult result = this.listener.last().result();
		assertThat(result.isAllowed()).isTrue();
		assertThat(remaining(result.decision(), "priced")).isEqualTo(9);
		assertThat(result.isShadowRejected()).isTrue();
		assertThat(this.listener.last().outcomes()).containsEntry("priced", RateLimitOutcome.ALLOWED)
			.containsEntry("trial", RateLimitOutcome.SHADOW_REJECTED);
	}

	@Test
	void aShadowAnnotationWhoseCostNoLimitCanGrantNeverRefusesTheCall() throws Exception {
		this.mvc
			.perform(get("/api/expr/annotated/shadow-cost").param("n", "11").header("X-Client", "shadow-cost-big-2"))
			.andExpect(status().isOk());
		RateLimitResult result = this.listener.last().result();
		assertThat(remaining(result.decision(), "gate")).isEqualTo(9);
		assertThat(remaining(result.decision(), "priced")).isEqualTo(9);
		assertThat(result.isShadowRejected()).isTrue();
		assertThat(result.shadowCost()).isEqualTo(11);
	}

	private static long remaining(Decision decision, String policy) {
		assertThat(decision).isNotNull();
		return decision.statuses()
			.stream()
			.filter((status) -> status.target().policy().equals(policy))
			.mapToLong(LimitStatus::remaining)
			.min()
			.orElseThrow();
	}

	@Test
	void skipsAShadowPolicyWhoseAnnotationKeyCannotBeEvaluated() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/expr/annotated/shadow-key").header("X-Client", "annotated-shadow-key"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"gate\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("gate");
	}

	@Test
	void skipsAShadowPolicyWhoseAnnotationCostCannotBeEvaluated() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/expr/annotated/shadow-cost").param("n", "abc").header("X-Client", "shadow-cost-2"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"gate\";q=10;w=60, \"priced\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertThat(this.limiter.acquires()).isEqualTo(before + 1);
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly("gate", "priced");
		this.mvc.perform(get("/api/expr/annotated/shadow-cost").param("n", "3").header("X-Client", "shadow-cost-2"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy",
					"\"gate\";q=10;w=60, \"priced\";q=10;w=60, \"trial\";q=10;w=60"))
			.andExpect(header().string("X-RateLimit-Remaining", "7"));
		// the shadow annotation's cost is the shadow policy's alone: the filter's and the
		// enforced annotation's are 1
		RateLimitResult result = this.listener.last().result();
		assertThat(remaining(result.decision(), "gate")).isEqualTo(8);
		assertThat(remaining(result.decision(), "priced")).isEqualTo(8);
		assertThat(remaining(result.shadowDecision(), "trial")).isEqualTo(7);
	}

	@Test
	void answersAFilterKeyExpressionThatFailsWith400AlsoWhenTheAnnotatedHandlerWouldNotRun() throws Exception {
		// the body does not bind, so the filter decides its policy after all: its key
		// fails as it would have up front
		int before = this.limiter.acquires();
		assertBadRequest(
				this.mvc.perform(
						post("/api/expr/tenant-batch").contentType(MediaType.APPLICATION_JSON).content("not json")),
				"/api/expr/tenant-batch",
				"The key expression of policy tenant could not be evaluated for this request: it reads a value that"
						+ " this request does not have");
		assertThat(this.limiter.acquires()).isEqualTo(before);
	}

	@Test
	void logsTheExpressionAndTheExceptionAtDebugLevel(CapturedOutput output) throws Exception {
		this.mvc.perform(get("/api/expr/filter/cost").param("n", "-7").header("X-Client", "logged"))
			.andExpect(status().isBadRequest());
		assertThat(output)
			.contains("Answered 400: Rate-limit cost expression #{#request.getParameter('n')} of the"
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

	@Test
	void leavesAnOperatorThatDoesNotApplyToTheTypesOfItsOperandsAServerError() throws Exception {
		// a parameter is text, whatever it holds: the expression is wrong for every
		// request
		int before = this.limiter.acquires();
		assertThatException().isThrownBy(
				() -> this.mvc.perform(get("/api/expr/filter/operator").param("n", "4").header("X-Client", "operator")))
			.isInstanceOf(IllegalStateException.class)
			.withMessageStartingWith("Rate-limit expression #{#request.getParameter('n') / 2} failed");
		assertThat(this.limiter.acquires()).isEqualTo(before);
	}

	private static ResultActions assertBadRequest(ResultActions result, String path, String detail) throws Exception {
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
		TenantService tenantService() {
			return new TenantService();
		}

		@Bean
		ExpressionController expressionController(TenantService tenantService) {
			return new ExpressionController(tenantService);
		}

		@Bean
		ServiceController serviceController(TenantService tenantService) {
			return new ServiceController(tenantService);
		}

		@Bean
		ServiceAdvice serviceAdvice() {
			return new ServiceAdvice();
		}

	}

	static class Pricing {

		public long costOf(HttpServletRequest request) {
			throw new IllegalStateException("the pricing service is down");
		}

		public long parse(String n) {
			return Long.parseLong(n);
		}

		public long quote(String n) {
			throw new PricingUnavailableException();
		}

	}

	static class PricingUnavailableException extends RuntimeException {

		private static final long serialVersionUID = 1L;

	}

	static class Tenants {

		public String of(String tenant) {
			return tenant.toLowerCase();
		}

		public String directory(HttpServletRequest request) {
			throw new IllegalStateException("the tenant directory is down");
		}

	}

	/**
	 * A rate-limited service method, called by a handler method that is not itself
	 * annotated.
	 */
	static class TenantService {

		@RateLimited(policy = "priced", key = "#{#tenant.toLowerCase()}")
		public String lookup(String tenant) {
			return tenant.toLowerCase();
		}

	}

	/**
	 * Calls a rate-limited service, whose failures the application answers with advice of
	 * its own.
	 */
	@RestController
	static class ServiceController {

		private final TenantService tenantService;

		ServiceController(TenantService tenantService) {
			this.tenantService = tenantService;
		}

		@GetMapping("/api/expr/service")
		String service(@RequestHeader(name = "X-Tenant", required = false) String tenant) {
			return this.tenantService.lookup(tenant);
		}

		@GetMapping("/api/expr/service/annotated")
		@RateLimited("priced")
		String annotated() {
			return "ok";
		}

	}

	/** The application's own answer to its errors, for {@link ServiceController} only. */
	@RestControllerAdvice(assignableTypes = ServiceController.class)
	static class ServiceAdvice {

		@ExceptionHandler(IllegalStateException.class)
		ResponseEntity<String> applicationError(IllegalStateException ex) {
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("handled by the application");
		}

	}

	@RestController
	static class ExpressionController {

		private final TenantService tenantService;

		ExpressionController(TenantService tenantService) {
			this.tenantService = tenantService;
		}

		@GetMapping({ "/api/expr/filter/cost", "/api/expr/filter/parsed", "/api/expr/filter/key",
				"/api/expr/filter/faulty", "/api/expr/filter/bean-parsed", "/api/expr/filter/shadow-key",
				"/api/expr/filter/shadow-cost", "/api/expr/filter/operator", "/api/expr/filter/converted",
				"/api/expr/filter/shadow-down" })
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

		@GetMapping("/api/expr/annotated/jdk-key")
		@RateLimited(policy = "priced", key = "#{#tenant.substring(0, 3).toLowerCase()}")
		String annotatedJdkKey(@RequestHeader(name = "X-Tenant", required = false) String tenant) {
			return "ok";
		}

		@GetMapping("/api/expr/annotated/quoted")
		@RateLimited(policy = "priced", cost = "#{@pricing.quote(#n)}")
		String annotatedQuoted(@RequestParam(required = false) String n) {
			return "ok";
		}

		@PostMapping("/api/expr/annotated/forgot-size")
		@RateLimited(policy = "priced", cost = "#{#queries}")
		List<String> annotatedForgotSize(@RequestBody List<String> queries) {
			return queries;
		}

		@GetMapping("/api/expr/annotated/shadow-key")
		@RateLimited(policy = "trial", key = "#{#tenant.toLowerCase()}")
		String annotatedShadowKey(@RequestHeader(name = "X-Tenant", required = false) String tenant) {
			return "ok";
		}

		@GetMapping("/api/expr/annotated/shadow-cost")
		@RateLimited("priced")
		@RateLimited(policy = "trial", cost = "#{#n}")
		String annotatedShadowCost(@RequestParam(required = false) String n) {
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

		@ExceptionHandler(PricingUnavailableException.class)
		ResponseEntity<String> pricingUnavailable() {
			return ResponseEntity.internalServerError().body("pricing unavailable");
		}

	}

}
