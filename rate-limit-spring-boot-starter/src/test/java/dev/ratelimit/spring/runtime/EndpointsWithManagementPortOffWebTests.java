package dev.ratelimit.spring.runtime;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.overrides.LimitOverrides;

import static dev.ratelimit.spring.runtime.ManagementPortCalls.assertNothingIsServed;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.sixCalls;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A servlet application with the actuator off HTTP ({@code management.server.port=-1}):
 * nothing of the {@code ratelimits} and {@code ratelimitoverrides} endpoints is served on
 * the application's port, though both are exposed, not even to the operator. Spring
 * Security's {@code EndpointRequest} rules then apply to that port, and refuse a caller
 * without credentials first.
 */
@SpringBootTest(classes = ManagementPortTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=-1", ManagementPortCalls.EXPOSED, ManagementPortCalls.POLICY_KEY,
				ManagementPortCalls.POLICY_RATE, ManagementPortCalls.FILTER_PATTERNS,
				ManagementPortCalls.FILTER_POLICIES })
class EndpointsWithManagementPortOffWebTests {

	@LocalServerPort
	private int port;

	@Autowired
	private LimitOverrides overrides;

	@Test
	void theApplicationPortAnswers404ToEveryMethodAndAPostRaisesNoLimits() throws Exception {
		Http application = new Http(this.port);
		assertNothingIsServed(application, "/actuator", 401);
		assertThat(this.overrides.list()).isEmpty();
		assertThat(sixCalls(application)).containsExactly(200, 200, 429, 429, 429, 429);
	}

}
