package dev.ratelimit.spring.web;

import java.time.Duration;

import jakarta.servlet.http.MappingMatch;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.error.ErrorAttributes;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.mock.web.MockHttpServletMapping;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.request.RequestPostProcessor;
import org.springframework.web.context.request.ServletWebRequest;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.RateLimitOutcome;
import dev.ratelimit.spring.testsupport.CountingRateLimiter;
import dev.ratelimit.spring.testsupport.MutableTimeSource;
import dev.ratelimit.spring.testsupport.RecordingListener;
import dev.ratelimit.spring.testsupport.RecordingSleeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.user;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.head;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The starter over HTTP: filter, annotation, headers, problem responses, tiers, keys,
 * shadow mode, shaping and concurrency permits, against the in-memory backend on a fake
 * clock. Each test uses its own client key.
 */
@SpringBootTest(classes = { WebTestApplication.class, RateLimitWebTests.CountingLimiter.class })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
class RateLimitWebTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private MutableTimeSource clock;

	@Autowired
	private CountingRateLimiter limiter;

	@Autowired
	private RecordingListener listener;

	@Autowired
	private RecordingSleeper sleeper;

	@Autowired
	private WebTestApplication.TestController controller;

	@Autowired
	private ErrorAttributes errorAttributes;

	@Test
	void workedExampleOneTenOfABurstOfTwelvePassThenFiveMoreAfterOneSecond() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(geocode("burst-key")).andExpect(status().isOk());
		}
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(geocode("burst-key"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("Retry-After", "1"));
		}
		this.clock.advance(Duration.ofSeconds(1));
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(geocode("burst-key")).andExpect(status().isOk());
		}
		this.mvc.perform(geocode("burst-key")).andExpect(status().isTooManyRequests());
	}

	@Test
	void writesTheExactDraftTenAndLegacyHeaders() throws Exception {
		this.mvc.perform(geocode("header-key"));
		this.mvc.perform(geocode("header-key"));
		this.mvc.perform(geocode("header-key"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"geocode-burst\";q=10;w=2"))
			.andExpect(header().string("RateLimit", "\"geocode-burst\";r=7;t=1"))
			.andExpect(header().string("X-RateLimit-Limit", "10"))
			.andExpect(header().string("X-RateLimit-Remaining", "7"))
			.andExpect(header().string("X-RateLimit-Reset", "1"));
	}

	@Test
	void answersARejectionWithAQuotaExceededProblem() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(geocode("problem-key"));
		}
		this.mvc.perform(geocode("problem-key"))
			.andExpect(status().isTooManyRequests())
			.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(header().string("RateLimit", "\"geocode-burst\";r=0;t=2"))
			.andExpect(jsonPath("$.type").value("https://iana.org/assignments/http-problem-types#quota-exceeded"))
			.andExpect(jsonPath("$.title").value("Too Many Requests"))
			.andExpect(jsonPath("$.status").value(429))
			.andExpect(jsonPath("$.detail").value("Rate limit exceeded for policy geocode-burst; retry after 1 second"))
			.andExpect(jsonPath("$.instance").value("/api/geocode"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("geocode-burst"))
			.andExpect(jsonPath("$.retryAfter").value(1));
	}

	@Test
	void hashesApiKeysBeforeTheyBecomeKeys() throws Exception {
		this.mvc.perform(geocode("secret-api-key")).andExpect(status().isOk());
		assertThat(this.limiter.lastLimits()).singleElement()
			.satisfies((limit) -> assertThat(limit.key()).doesNotContain("secret-api-key")
				.startsWith("key:")
				.hasSize(4 + 64));
	}

	@Test
	void givesEachTierItsOwnLimitsFromTierAuthorities() throws Exception {
		this.mvc.perform(get("/api/plans").with(user("free-user").authorities(new SimpleGrantedAuthority("TIER_FREE"))))
			.andExpect(header().string("RateLimit-Policy", "\"plans\";q=60;w=60"));
		this.mvc.perform(get("/api/plans").with(user("paid-user").authorities(new SimpleGrantedAuthority("tier_Paid"))))
			.andExpect(header().string("RateLimit-Policy", "\"plans\";q=1000;w=60"));
		this.mvc.perform(get("/api/plans").with(user("no-tier-user")))
			.andExpect(header().string("RateLimit-Policy", "\"plans\";q=60;w=60"));
		assertThat(this.listener.last().tier()).isEqualTo("free");
	}

	@Test
	void givesACallerOfATierThePolicyDoesNotListTheDefaultTiersLimits() throws Exception {
		// plans lists free and paid only; a token may name any tier
		this.mvc.perform(get("/api/plans").with(user("gold-user").authorities(new SimpleGrantedAuthority("TIER_GOLD"))))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"plans\";q=60;w=60"))
			.andExpect(header().string("RateLimit", "\"plans\";r=59;t=1"));
		assertThat(this.listener.last().tier()).isEqualTo("gold");
	}

	@Test
	void rejectsTheSixtyFirstFreeRequestWhilePaidCallersGoOn() throws Exception {
		RequestPostProcessor free = user("busy-free").authorities(new SimpleGrantedAuthority("TIER_FREE"));
		RequestPostProcessor paid = user("busy-paid").authorities(new SimpleGrantedAuthority("TIER_PAID"));
		for (int i = 0; i < 60; i++) {
			this.mvc.perform(get("/api/plans").with(free)).andExpect(status().isOk());
			this.mvc.perform(get("/api/plans").with(paid)).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/plans").with(free))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "1"));
		this.mvc.perform(get("/api/plans").with(paid))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"plans\";r=939;t=4"));
	}

	@Test
	void honoursForwardedForOnlyFromTrustedProxies() throws Exception {
		// behind the trusted proxy 10.0.0.5, each forwarded client has its own quota
		this.mvc.perform(ip("10.0.0.5", "203.0.113.7")).andExpect(status().isOk());
		this.mvc.perform(ip("10.0.0.5", "203.0.113.7")).andExpect(status().isOk());
		this.mvc.perform(ip("10.0.0.5", "203.0.113.7")).andExpect(status().isTooManyRequests());
		this.mvc.perform(ip("10.0.0.5", "198.51.100.99, 203.0.113.8")).andExpect(status().isOk());
		assertThat(this.limiter.lastLimits().get(0).key()).isEqualTo("ip:203.0.113.8");
		// an untrusted peer cannot escape its quota by forging the header
		this.mvc.perform(ip("192.0.2.1", "203.0.113.20")).andExpect(status().isOk());
		this.mvc.perform(ip("192.0.2.1", "203.0.113.21")).andExpect(status().isOk());
		this.mvc.perform(ip("192.0.2.1", "203.0.113.22")).andExpect(status().isTooManyRequests());
		assertThat(this.limiter.lastLimits().get(0).key()).isEqualTo("ip:192.0.2.1");
	}

	@Test
	void ignoresAForwardedHeaderWhenTheTrustedProxiesWriteXForwardedFor() throws Exception {
		// client.forwarded-header defaults to x-forwarded-for: a Forwarded header comes
		// from the client, not the proxy
		this.mvc
			.perform(get("/api/ip").with(remote("10.1.2.3"))
				.header("Forwarded", "for=198.51.100.17;proto=https, for=\"10.9.9.9:8080\""))
			.andExpect(status().isOk());
		assertThat(this.limiter.lastLimits().get(0).key()).isEqualTo("ip:10.1.2.3");
	}

	@Test
	void chargesTheCostThatASpelExpressionComputes() throws Exception {
		this.mvc.perform(get("/api/weighted").param("n", "4").header("X-Client", "spel-cost"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"weighted\";r=6;t=24"));
		this.mvc.perform(get("/api/weighted").param("n", "7").header("X-Client", "spel-cost"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "6"));
	}

	@Test
	void decidesAFilterAndAnAnnotationOnOneRequestInOneCallChargedOnce() throws Exception {
		int before = this.limiter.acquires();
		this.mvc
			.perform(post("/api/batch").header("X-Client", "union")
				.contentType(MediaType.APPLICATION_JSON)
				.content("[\"Rabat\",\"Fes\",\"Tangier\"]"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"weighted\";q=10;w=60, \"batch\";q=10;w=60"))
			.andExpect(header().string("RateLimit", "\"weighted\";r=7;t=18"));
		assertDecidedOnceBy(before, "weighted", "batch");
	}

	@Test
	void decidesOnceWithTheAnnotationWhenTheAnnotatedMappingWins() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/shelf/book").header("X-Client", "shelf-book"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"weighted\";q=10;w=60, \"batch\";q=10;w=60"));
		assertDecidedOnceBy(before, "weighted", "batch");
	}

	@Test
	void leavesTheDecisionToTheFilterWhenAMoreSpecificPlainMappingWins() throws Exception {
		// "/api/shelf/plain" also matches the annotated "/api/shelf/{item}", but the
		// plain mapping handles it
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/shelf/plain").header("X-Client", "shelf-plain"))
			.andExpect(status().isOk())
			.andExpect(content().string("plain"))
			.andExpect(header().string("RateLimit-Policy", "\"weighted\";q=10;w=60"))
			.andExpect(header().string("RateLimit", "\"weighted\";r=9;t=6"));
		assertDecidedOnceBy(before, "weighted");
	}

	@Test
	void leavesAHeadRequestToTheAnnotationOfTheGetMappingThatHandlesIt() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(head("/api/shelf/book").header("X-Client", "shelf-head"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"weighted\";q=10;w=60, \"batch\";q=10;w=60"));
		assertDecidedOnceBy(before, "weighted", "batch");
	}

	@Test
	void findsTheAnnotatedHandlerOfADispatcherServletMappedByAPathPrefix() throws Exception {
		// the filter matches "/app/api/shelf/book"; the handler mappings see
		// "/api/shelf/book", as the DispatcherServlet
		// mapped to "/app/*" does: the pre-check must look up that path, not the filter's
		int before = this.limiter.acquires();
		this.mvc
			.perform(get("/app/api/shelf/book").servletPath("/app").header("X-Client", "app-prefix").with((request) -> {
				request.setHttpServletMapping(
						new MockHttpServletMapping("api/shelf/book", "/app/*", "dispatcherServlet", MappingMatch.PATH));
				return request;
			}))
			.andExpect(status().isOk())
			.andExpect(content().string("book"))
			.andExpect(header().string("RateLimit-Policy", "\"weighted\";q=10;w=60, \"batch\";q=10;w=60"));
		assertDecidedOnceBy(before, "weighted", "batch");
	}

	@Test
	void decidesInTheFilterARequestWhoseMethodNoAnnotatedMappingAccepts() throws Exception {
		// "/api/shelf/{item}" is annotated for GET only: a POST never reaches it, so the
		// filter decides and writes headers
		int before = this.limiter.acquires();
		this.mvc.perform(post("/api/shelf/book").header("X-Client", "shelf-post"))
			.andExpect(status().isMethodNotAllowed())
			.andExpect(header().string("RateLimit-Policy", "\"weighted\";q=10;w=60"))
			.andExpect(header().string("RateLimit", "\"weighted\";r=9;t=6"));
		assertDecidedOnceBy(before, "weighted");
	}

	@Test
	void chargesTheFilterPoliciesWhenAnAnnotatedHandlerNeverRunsAndSaysSoInTheHeaders() throws Exception {
		// the body does not bind, so the batch handler (and its per-query cost) never
		// runs: the filter's policy takes
		// its cost of 1, and the 400 carries the headers like any limited response
		int before = this.limiter.acquires();
		this.mvc
			.perform(post("/api/batch").header("X-Client", "unbound")
				.contentType(MediaType.APPLICATION_JSON)
				.content("not json"))
			.andExpect(status().isBadRequest())
			.andExpect(header().string("RateLimit-Policy", "\"weighted\";q=10;w=60"))
			.andExpect(header().string("RateLimit", "\"weighted\";r=9;t=6"))
			.andExpect(header().string("X-RateLimit-Limit", "10"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"));
		assertDecidedOnceBy(before, "weighted");
		this.mvc.perform(get("/api/weighted").param("n", "1").header("X-Client", "unbound"))
			.andExpect(header().string("RateLimit", "\"weighted\";r=8;t=12"));
	}

	@Test
	void answersABadRequestOverTheLimitWith429WhenItsAnnotatedHandlerWouldNotRun() throws Exception {
		// as a handler without the annotation would be answered: the limit first, the
		// body after
		this.mvc.perform(get("/api/weighted").param("n", "10").header("X-Client", "unbound-spent"))
			.andExpect(status().isOk());
		this.mvc
			.perform(post("/api/batch").header("X-Client", "unbound-spent")
				.contentType(MediaType.APPLICATION_JSON)
				.content("not json"))
			.andExpect(status().isTooManyRequests())
			.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(header().string("Retry-After", "6"))
			.andExpect(header().string("RateLimit", "\"weighted\";r=0;t=60"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("weighted"))
			// the failure was recorded for the error attributes before the 429 replaced
			// its response
			.andExpect((result) -> assertThat(this.errorAttributes.getError(new ServletWebRequest(result.getRequest())))
				.isInstanceOf(HttpMessageNotReadableException.class));
	}

	@Test
	void answersACostAboveCapacityWith429AndNoRetryPromise() throws Exception {
		String elevenQueries = "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\"]";
		this.mvc
			.perform(post("/api/batch").header("X-Client", "too-big")
				.contentType(MediaType.APPLICATION_JSON)
				.content(elevenQueries))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().doesNotExist("Retry-After"))
			.andExpect(jsonPath("$.retryAfter").doesNotExist())
			.andExpect(jsonPath("$['violated-policies']").isArray())
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("can ever grant")));
	}

	@Test
	void limitsAnAnnotatedHandlerThatNoFilterCovers() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/annotated-only").with(remote("192.0.2.50"))).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/annotated-only").with(remote("192.0.2.50")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(header().string("RateLimit-Policy", "\"geocode-burst\";q=10;w=2"))
			.andExpect(jsonPath("$.instance").value("/api/annotated-only"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("geocode-burst"));
	}

	@Test
	void neverRejectsForAShadowPolicyButReportsAndRecordsIt() throws Exception {
		this.mvc.perform(get("/api/observed").header("X-Client", "shadowed")).andExpect(status().isOk());
		assertThat(this.listener.last().outcomes()).containsEntry("observed", RateLimitOutcome.ALLOWED);
		this.mvc.perform(get("/api/observed").header("X-Client", "shadowed"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"observed\";q=1;w=60"))
			.andExpect(header().string("RateLimit", "\"observed\";r=0;t=60"));
		assertThat(this.listener.last().outcomes()).containsEntry("observed", RateLimitOutcome.SHADOW_REJECTED);
	}

	@Test
	void delaysAShapedRequestUntilItsTurn() throws Exception {
		this.mvc.perform(get("/api/smooth").header("X-Client", "shaped")).andExpect(status().isOk());
		int before = this.sleeper.delays().size();
		this.mvc.perform(get("/api/smooth").header("X-Client", "shaped")).andExpect(status().isOk());
		assertThat(this.sleeper.delays().subList(before, this.sleeper.delays().size()))
			.containsExactly(Duration.ofSeconds(1));
		assertThat(this.listener.last().outcomes()).containsEntry("smooth", RateLimitOutcome.DELAYED);
	}

	@Test
	void releasesAConcurrencyPermitWhenTheResponseCompletes() throws Exception {
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "sync")).andExpect(status().isOk());
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "sync")).andExpect(status().isOk());
	}

	@Test
	void holdsAConcurrencyPermitUntilAnAsyncResponseCompletes() throws Exception {
		MvcResult first = this.mvc.perform(get("/api/in-flight/async").header("X-Client", "async"))
			.andExpect(request().asyncStarted())
			.andReturn();
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "async"))
			.andExpect(status().isTooManyRequests());
		this.controller.completeAsync();
		this.mvc.perform(asyncDispatch(first)).andExpect(status().isOk());
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "async")).andExpect(status().isOk());
	}

	@Test
	void releasesAConcurrencyPermitWhenTheHandlerThrows() throws Exception {
		assertThatException()
			.isThrownBy(() -> this.mvc.perform(get("/api/in-flight/fail").header("X-Client", "failing")))
			.withRootCauseInstanceOf(IllegalStateException.class);
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "failing")).andExpect(status().isOk());
	}

	@Test
	void aFilterForGetAlsoLimitsHeadWhichRunsTheGetHandler() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(head("/api/get-only").header("X-Client", "head-only"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"weighted\";r=9;t=6"));
		assertDecidedOnceBy(before, "weighted");
		before = this.limiter.acquires();
		this.mvc.perform(post("/api/get-only").header("X-Client", "head-only"))
			.andExpect(header().doesNotExist("RateLimit"));
		assertThat(this.limiter.acquires()).isEqualTo(before);
	}

	@Test
	void leavesUnmatchedRequestsAloneWithoutHeaders() throws Exception {
		int before = this.limiter.acquires();
		this.mvc.perform(get("/api/open"))
			.andExpect(status().isOk())
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(header().doesNotExist("X-RateLimit-Limit"));
		assertThat(this.limiter.acquires()).isEqualTo(before);
	}

	/**
	 * Asserts that the requests since {@code before} made one call to the limiter, with
	 * the limits of these policies.
	 */
	private void assertDecidedOnceBy(int before, String... policies) {
		assertThat(this.limiter.acquires() - before).isOne();
		assertThat(this.limiter.lastLimits()).extracting((limit) -> limit.policy()).containsExactly(policies);
	}

	private static MockHttpServletRequestBuilder geocode(String apiKey) {
		return get("/api/geocode").header("X-API-Key", apiKey);
	}

	private static MockHttpServletRequestBuilder ip(String peer, String forwardedFor) {
		return get("/api/ip").with(remote(peer)).header("X-Forwarded-For", forwardedFor);
	}

	private static RequestPostProcessor remote(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class CountingLimiter {

		@Bean
		CountingRateLimiter countingRateLimiter(TimeSource timeSource) {
			return new CountingRateLimiter(InMemoryRateLimiter.builder().timeSource(timeSource).build());
		}

	}

}
