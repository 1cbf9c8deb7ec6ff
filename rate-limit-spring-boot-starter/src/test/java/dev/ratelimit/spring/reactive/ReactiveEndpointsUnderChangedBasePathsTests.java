package dev.ratelimit.spring.reactive;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;

import dev.ratelimit.spring.overrides.LimitOverrides;

import static dev.ratelimit.spring.reactive.ManagementPortClient.CLIENT;
import static dev.ratelimit.spring.reactive.ManagementPortClient.FIVE_A_MINUTE;
import static dev.ratelimit.spring.reactive.ManagementPortClient.RAISED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application whose actuator has a port of its own, with
 * {@code management.server.base-path} and {@code management.endpoints.web.base-path}
 * changed: the overrides' {@code POST} answers below both on the management port, under
 * the actuator's security, and nothing of either endpoint answers on the application's
 * port, at the new paths or the default one.
 */
@SpringBootTest(classes = ReactiveManagementPortTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ManagementPortClient.REACTIVE, "management.server.port=0", "management.server.base-path=/manage",
				"management.endpoints.web.base-path=/ops", ManagementPortClient.EXPOSED,
				ManagementPortClient.POLICY_KEY, ManagementPortClient.POLICY_RATE, ManagementPortClient.FILTER_PATTERNS,
				ManagementPortClient.FILTER_POLICIES })
class ReactiveEndpointsUnderChangedBasePathsTests {

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@Autowired
	private LimitOverrides overrides;

	@Test
	void theManagementPortServesThePostBelowBothBasePathsAndTheApplicationPortNothing() {
		ManagementPortClient application = new ManagementPortClient(this.port);
		for (String basePath : List.of("/ops", "/manage/ops", "/actuator")) {
			application.assertNothingIsServed(basePath, 404);
		}
		assertThat(this.overrides.list()).isEmpty();

		ManagementPortClient management = new ManagementPortClient(this.managementPort);
		String override = "/manage/ops/ratelimitoverrides" + CLIENT;
		assertThat(management.anonymous(HttpMethod.POST, override, RAISED)).isEqualTo(401);
		assertThat(management.operator(HttpMethod.POST, override, FIVE_A_MINUTE).getStatus().value()).isEqualTo(204);
		assertThat(management.operator(HttpMethod.GET, override, null).getStatus().value()).isEqualTo(200);
		assertThat(application.sixCalls()).containsExactly(200, 200, 200, 200, 200, 429);
	}

}
