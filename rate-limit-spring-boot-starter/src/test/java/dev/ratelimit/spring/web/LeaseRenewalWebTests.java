package dev.ratelimit.spring.web;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.spring.RateLimitService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A request that outlives its concurrency limit's lease time (an asynchronous response,
 * as for a stream or a long poll) keeps its permit: the starter renews it while the
 * response runs, and stops when it completes. The limiter's clock is a manual one; the
 * renewals run on the starter's own scheduler, so the test waits for one to land before
 * it moves the clock on.
 */
@SpringBootTest(classes = { WebTestApplication.class, LeaseRenewalWebTests.ManualClock.class },
		properties = { "ratelimit.policies.in-flight.limits[0].algorithm=concurrency",
				"ratelimit.policies.in-flight.limits[0].max=1",
				"ratelimit.policies.in-flight.limits[0].lease-time=1s" })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
class LeaseRenewalWebTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private WebTestApplication.TestController controller;

	@Autowired
	private ManualTimeSource clock;

	@Autowired
	private RateLimiter limiter;

	@Autowired
	private RateLimitService service;

	@Test
	void anAsyncResponseLongerThanTheLeaseTimeKeepsItsPermitUntilItCompletes() throws Exception {
		MvcResult first = this.mvc.perform(get("/api/in-flight/async").header("X-Client", "streaming"))
			.andExpect(request().asyncStarted())
			.andReturn();
		KeyedLimit lease = new KeyedLimit("in-flight", "header:streaming",
				this.service.policies().get("in-flight").limitsFor("free", "free").get(0));
		for (int i = 0; i < 3; i++) {
			this.clock.advance(Duration.ofMillis(700));
			awaitRenewal(lease);
		}
		// 2.1 s into a response whose permit has a one-second lease: still held
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "streaming"))
			.andExpect(status().isTooManyRequests());
		this.controller.completeAsync();
		this.mvc.perform(asyncDispatch(first)).andExpect(status().isOk());
		assertThat(this.service.heldDecisions()).isZero();
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "streaming")).andExpect(status().isOk());
	}

	/**
	 * Waits until a renewal at the clock's current time has moved the lease's expiry a
	 * whole lease time on.
	 */
	private void awaitRenewal(KeyedLimit lease) {
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.limiter.inspect(List.of(lease)).get(0).resetAfter().equals(Duration.ofSeconds(1)));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ManualClock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
