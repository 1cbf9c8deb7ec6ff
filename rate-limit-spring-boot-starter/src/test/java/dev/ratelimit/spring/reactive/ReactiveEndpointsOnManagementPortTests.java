package dev.ratelimit.spring.reactive;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import dev.ratelimit.spring.overrides.LimitOverrides;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static dev.ratelimit.spring.reactive.ManagementPortClient.CLIENT;
import static dev.ratelimit.spring.reactive.ManagementPortClient.FIVE_A_MINUTE;
import static dev.ratelimit.spring.reactive.ManagementPortClient.RAISED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} and {@code ratelimitoverrides} endpoints of a WebFlux
 * application whose actuator has a port of its own, over real HTTP on Netty, with
 * BlockHound: every operation, the overrides' {@code POST} included, is served on the
 * management port under the rules that Spring Security gives the actuator there, and none
 * on the application's port, as in a servlet application
 * ({@code EndpointsOnManagementPortWebTests}).
 */
@SpringBootTest(classes = ReactiveManagementPortTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ManagementPortClient.REACTIVE, "management.server.port=0", ManagementPortClient.EXPOSED,
				ManagementPortClient.POLICY_KEY, ManagementPortClient.POLICY_RATE, ManagementPortClient.FILTER_PATTERNS,
				ManagementPortClient.FILTER_POLICIES })
class ReactiveEndpointsOnManagementPortTests {

	@LocalServerPort
	private int port;

	@LocalManagementPort
	private int managementPort;

	@Autowired
	private MutableTimeSource clock;

	@Autowired
	private LimitOverrides overrides;

	@BeforeAll
	static void blockHound() {
		BlockHoundInstalled.check();
	}

	@BeforeEach
	void refillEveryLimit() {
		this.clock.advance(Duration.ofHours(1));
	}

	@AfterEach
	void removeOverrides() {
		this.overrides.list().forEach((override) -> this.overrides.remove(override.policy(), override.client()));
	}

	@Test
	void theApplicationPortAnswers404ToEveryMethodOnBothEndpoints() {
		new ManagementPortClient(this.port).assertNothingIsServed("/actuator", 404);
		assertThat(this.overrides.list()).isEmpty();
	}

	@Test
	void aPostOnTheApplicationPortRaisesNoClientsLimits() {
		ManagementPortClient application = new ManagementPortClient(this.port);
		List<Integer> statuses = new ArrayList<>();
		statuses.add(application.anonymous(HttpMethod.POST, "/actuator/ratelimitoverrides" + CLIENT, RAISED));
		statuses.addAll(application.sixCalls());
		// the POST, then six calls to the 2/1m policy
		assertThat(statuses).containsExactly(404, 200, 200, 429, 429, 429, 429);
	}

	@Test
	void theManagementPortServesEveryOperationAndAnOverrideSetThereApplies() {
		ManagementPortClient management = new ManagementPortClient(this.managementPort);
		ManagementPortClient application = new ManagementPortClient(this.port);
		String override = "/actuator/ratelimitoverrides" + CLIENT;
		assertThat(status(management.operator(HttpMethod.POST, override, FIVE_A_MINUTE))).isEqualTo(204);
		EntityExchangeResult<byte[]> one = management.operator(HttpMethod.GET, override, null);
		assertThat(status(one)).isEqualTo(200);
		assertThat(json(one).read("$.limits[0].rate", String.class)).isEqualTo("5/1m");
		EntityExchangeResult<byte[]> all = management.operator(HttpMethod.GET, "/actuator/ratelimitoverrides", null);
		assertThat(json(all).read("$.overrides[*].client", List.class)).containsExactly("ip:127.0.0.1");

		assertThat(application.sixCalls()).containsExactly(200, 200, 200, 200, 200, 429);

		EntityExchangeResult<byte[]> overview = management.operator(HttpMethod.GET, "/actuator/ratelimits", null);
		assertThat(status(overview)).isEqualTo(200);
		assertThat(json(overview).read("$.policies['per-address'].key", String.class)).isEqualTo("ip");
		EntityExchangeResult<byte[]> state = management.operator(HttpMethod.GET, "/actuator/ratelimits" + CLIENT, null);
		assertThat(status(state)).isEqualTo(200);
		assertThat(json(state).read("$.limits[0].remaining", Long.class)).isZero();
		assertThat(status(management.operator(HttpMethod.DELETE, "/actuator/ratelimits" + CLIENT, null)))
			.isEqualTo(204);
		assertThat(application.sixCalls().get(0)).isEqualTo(200);

		assertThat(status(management.operator(HttpMethod.DELETE, override, null))).isEqualTo(204);
		assertThat(status(management.operator(HttpMethod.GET, override, null))).isEqualTo(404);
	}

	@Test
	void theOnlyOverridesPostServedIsTheOneEndpointRequestRulesGuard() {
		ManagementPortClient management = new ManagementPortClient(this.managementPort);
		String override = "/actuator/ratelimitoverrides" + CLIENT;
		assertThat(management.anonymous(HttpMethod.POST, override, RAISED)).isEqualTo(401);
		// the application's port, where the rules do not reach
		assertThat(new ManagementPortClient(this.port).anonymous(HttpMethod.POST, override, RAISED)).isEqualTo(404);
		assertThat(this.overrides.list()).isEmpty();
		assertThat(status(management.operator(HttpMethod.POST, override, RAISED))).isEqualTo(204);
		assertThat(this.overrides.list()).hasSize(1);
	}

	private static int status(EntityExchangeResult<byte[]> response) {
		return response.getStatus().value();
	}

	private static DocumentContext json(EntityExchangeResult<byte[]> response) {
		return JsonPath.parse(new String(response.getResponseBodyContent(), StandardCharsets.UTF_8));
	}

}
