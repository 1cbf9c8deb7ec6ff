package dev.ratelimit.spring.reactive;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.overrides.LimitOverrides;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application with the actuator off HTTP ({@code management.server.port=-1}):
 * nothing of the {@code ratelimits} and {@code ratelimitoverrides} endpoints is served on
 * the application's port, though both are exposed, not even to the operator. Spring
 * Security's {@code EndpointRequest} rules then apply to that port, and refuse a caller
 * without credentials first.
 */
@SpringBootTest(classes = ReactiveManagementPortTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ManagementPortClient.REACTIVE, "management.server.port=-1", ManagementPortClient.EXPOSED,
				ManagementPortClient.POLICY_KEY, ManagementPortClient.POLICY_RATE, ManagementPortClient.FILTER_PATTERNS,
				ManagementPortClient.FILTER_POLICIES })
class ReactiveEndpointsWithManagementPortOffTests {

	@LocalServerPort
	private int port;

	@Autowired
	private LimitOverrides overrides;

	@Test
	void theApplicationPortAnswers404ToEveryMethodAndAPostRaisesNoLimits() {
		ManagementPortClient application = new ManagementPortClient(this.port);
		application.assertNothingIsServed("/actuator", 401);
		assertThat(this.overrides.list()).isEmpty();
		assertThat(application.sixCalls()).containsExactly(200, 200, 429, 429, 429, 429);
	}

}
