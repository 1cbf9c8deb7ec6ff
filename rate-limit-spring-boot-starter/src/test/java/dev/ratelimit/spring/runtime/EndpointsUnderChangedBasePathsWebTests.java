package dev.ratelimit.spring.runtime;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.overrides.LimitOverrides;

import static dev.ratelimit.spring.runtime.ManagementPortCalls.CLIENT;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.FIVE_A_MINUTE;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.RAISED;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.assertNothingIsServed;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.sixCalls;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A servlet application whose actuator has a port of its own, with
 * {@code management.server.base-path} and {@code management.endpoints.web.base-path}
 * changed: the overrides' {@code POST} answers below both on the management port, under
 * the actuator's security, and nothing of either endpoint answers on the application's
 * port, at the new paths or the default one.
 */
@SpringBootTest(classes = ManagementPortTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "management.server.base-path=/manage",
				"management.endpoints.web.base-path=/ops", ManagementPortCalls.EXPOSED, ManagementPortCalls.POLICY_KEY,
				ManagementPortCalls.POLICY_RATE, ManagementPortCalls.FILTER_PATTERNS,
				ManagementPortCalls.FILTER_POLICIES })
class EndpointsUnderChangedBasePathsWebTests {

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@Autowired
	private LimitOverrides overrides;

	@Test
	void theManagementPortServesThePostBelowBothBasePathsAndTheApplicationPortNothing() throws Exception {
		Http application = new Http(this.port);
		for (String basePath : List.of("/ops", "/manage/ops", "/actuator")) {
			assertNothingIsServed(application, basePath, 404);
		}
		assertThat(this.overrides.list()).isEmpty();

		Http management = new Http(this.managementPort);
		String override = "/manage/ops/ratelimitoverrides" + CLIENT;
		assertThat(management.anonymous("POST", override, RAISED).statusCode()).isEqualTo(401);
		assertThat(management.operator("POST", override, FIVE_A_MINUTE).statusCode()).isEqualTo(204);
		assertThat(management.operator("GET", override, null).statusCode()).isEqualTo(200);
		assertThat(sixCalls(application)).containsExactly(200, 200, 200, 200, 200, 429);
	}

}
