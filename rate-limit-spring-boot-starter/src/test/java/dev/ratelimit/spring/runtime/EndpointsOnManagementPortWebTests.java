package dev.ratelimit.spring.runtime;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.spring.overrides.LimitOverrides;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static dev.ratelimit.spring.runtime.ManagementPortCalls.CLIENT;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.FIVE_A_MINUTE;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.RAISED;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.assertNothingIsServed;
import static dev.ratelimit.spring.runtime.ManagementPortCalls.sixCalls;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} and {@code ratelimitoverrides} endpoints of a servlet
 * application whose actuator has a port of its own, over real HTTP on Tomcat: every
 * operation, the overrides' {@code POST} included, is served on the management port under
 * the rules that Spring Security gives the actuator there, and none on the application's
 * port.
 */
@SpringBootTest(classes = ManagementPortTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", ManagementPortCalls.EXPOSED, ManagementPortCalls.POLICY_KEY,
				ManagementPortCalls.POLICY_RATE, ManagementPortCalls.FILTER_PATTERNS,
				ManagementPortCalls.FILTER_POLICIES })
class EndpointsOnManagementPortWebTests {

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@Autowired
	private MutableTimeSource clock;

	@Autowired
	private LimitOverrides overrides;

	@BeforeEach
	void refillEveryLimit() {
		this.clock.advance(Duration.ofHours(1));
	}

	@AfterEach
	void removeOverrides() {
		this.overrides.list().forEach((override) -> this.overrides.remove(override.policy(), override.client()));
	}

	@Test
	void theDocShowsTheSecurityConfigurationOfTheTestApplication() {
		assertThat(DocExamples.codeMissingFrom(ManagementPortTestApplication.class, "docs/OBSERVABILITY.md",
				"management-port-security"))
			.isEmpty();
	}

	@Test
	void theApplicationPortAnswers404ToEveryMethodOnBothEndpoints() throws Exception {
		assertNothingIsServed(new Http(this.port), "/actuator", 404);
		assertThat(this.overrides.list()).isEmpty();
	}

	@Test
	void aPostOnTheApplicationPortRaisesNoClientsLimits() throws Exception {
		Http application = new Http(this.port);
		List<Integer> statuses = new ArrayList<>();
		statuses.add(application.anonymous("POST", "/actuator/ratelimitoverrides" + CLIENT, RAISED).statusCode());
		statuses.addAll(sixCalls(application));
		// the POST, then six calls to the 2/1m policy
		assertThat(statuses).containsExactly(404, 200, 200, 429, 429, 429, 429);
	}

	@Test
	void theManagementPortServesEveryOperationAndAnOverrideSetThereApplies() throws Exception {
		Http management = new Http(this.managementPort);
		Http application = new Http(this.port);
		String override = "/actuator/ratelimitoverrides" + CLIENT;
		assertThat(management.operator("POST", override, FIVE_A_MINUTE).statusCode()).isEqualTo(204);
		HttpResponse<String> one = management.operator("GET", override, null);
		assertThat(one.statusCode()).isEqualTo(200);
		assertThat(JsonPath.parse(one.body()).read("$.limits[0].rate", String.class)).isEqualTo("5/1m");
		HttpResponse<String> all = management.operator("GET", "/actuator/ratelimitoverrides", null);
		assertThat(JsonPath.parse(all.body()).read("$.overrides[*].client", List.class))
			.containsExactly("ip:127.0.0.1");

		assertThat(sixCalls(application)).containsExactly(200, 200, 200, 200, 200, 429);

		HttpResponse<String> overview = management.operator("GET", "/actuator/ratelimits", null);
		assertThat(overview.statusCode()).isEqualTo(200);
		assertThat(JsonPath.parse(overview.body()).read("$.policies['per-address'].key", String.class)).isEqualTo("ip");
		HttpResponse<String> state = management.operator("GET", "/actuator/ratelimits" + CLIENT, null);
		assertThat(state.statusCode()).isEqualTo(200);
		assertThat(JsonPath.parse(state.body()).read("$.limits[0].remaining", Long.class)).isZero();
		assertThat(management.operator("DELETE", "/actuator/ratelimits" + CLIENT, null).statusCode()).isEqualTo(204);
		assertThat(application.api("any").statusCode()).isEqualTo(200);

		assertThat(management.operator("DELETE", override, null).statusCode()).isEqualTo(204);
		assertThat(management.operator("GET", override, null).statusCode()).isEqualTo(404);
	}

	@Test
	void theOnlyOverridesPostServedIsTheOneEndpointRequestRulesGuard() throws Exception {
		Http management = new Http(this.managementPort);
		String override = "/actuator/ratelimitoverrides" + CLIENT;
		assertThat(management.anonymous("POST", override, RAISED).statusCode()).isEqualTo(401);
		// the application's port, where the rules do not reach
		assertThat(new Http(this.port).anonymous("POST", override, RAISED).statusCode()).isEqualTo(404);
		assertThat(this.overrides.list()).isEmpty();
		assertThat(management.operator("POST", override, RAISED).statusCode()).isEqualTo(204);
		assertThat(this.overrides.list()).hasSize(1);
	}

}
