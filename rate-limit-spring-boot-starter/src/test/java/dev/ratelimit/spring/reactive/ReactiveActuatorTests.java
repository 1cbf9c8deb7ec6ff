package dev.ratelimit.spring.reactive;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import dev.ratelimit.spring.autoconfigure.RateLimitConfigurationReloader;
import dev.ratelimit.spring.overrides.LimitOverrides;
import dev.ratelimit.spring.testsupport.MutableTimeSource;
import dev.ratelimit.spring.testsupport.RateLimitsEndpointJson;
import dev.ratelimit.spring.web.reactive.RateLimitWebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The actuator side of a WebFlux application served by Netty, driven over HTTP by
 * {@link WebTestClient} with BlockHound failing any blocking call on an event loop: the
 * {@code ratelimits} endpoint, the {@code ratelimit.requests} metric, the
 * {@code rateLimit} health contributor, per-client overrides and a live reload, each as a
 * servlet application has them (compare {@code RateLimitsEndpointWebTests},
 * {@code OverridesEndpointWebTests} and {@code LiveReloadTests}), with no configuration
 * beyond the servlet one. The clock stands still; each test uses its own clients.
 */
@SpringBootTest(classes = ReactiveActuatorTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@ActiveProfiles("reactive-actuator")
class ReactiveActuatorTests {

	private static final String OVERRIDES = "/actuator/ratelimitoverrides/api/";

	@Autowired
	private WebTestClient client;

	@Autowired
	private MutableTimeSource clock;

	@Autowired
	private LimitOverrides overrides;

	@BeforeAll
	static void blockHound() {
		BlockHoundInstalled.check();
	}

	@AfterEach
	void removeOverrides() {
		this.overrides.list().forEach((override) -> this.overrides.remove(override.policy(), override.client()));
	}

	@Test
	void overviewDescribesTheBackendThePoliciesAndTheReactiveFiltersRulesAsInAServletApplication() {
		DocumentContext json = json(get("/actuator/ratelimits"));
		RateLimitsEndpointJson.assertOverview(json);
		// each rule of the one reactive filter, once
		assertThat(json.read("$.filters[*].patterns", List.class)).containsExactly(List.of("/api/geocode"),
				List.of("/api/counted"), List.of("/api/things"));
	}

	@Test
	void perKeyReadShowsWhatTheLastResponsesHeadersSaidAndConsumesNothing() {
		EntityExchangeResult<byte[]> last = null;
		for (int i = 0; i < 3; i++) {
			last = api("/api/geocode", "reader-key");
			assertThat(last.getStatus().value()).isEqualTo(200);
		}
		EntityExchangeResult<byte[]> lastCall = last;
		for (int read = 0; read < 3; read++) {
			EntityExchangeResult<byte[]> state = get("/actuator/ratelimits/geocode-burst/reader-key");
			assertThat(state.getStatus().value()).isEqualTo(200);
			RateLimitsEndpointJson.assertStateAsTheHeadersSaid(json(state), (name) -> header(lastCall, name));
		}
		assertThat(header(api("/api/geocode", "reader-key"), "X-RateLimit-Remaining")).isEqualTo("6");
	}

	@Test
	void resetNeedsAnOperatorAndThenGivesTheClientAFullBucket() {
		for (int i = 0; i < 10; i++) {
			assertThat(api("/api/geocode", "reset-key").getStatus().value()).isEqualTo(200);
		}
		assertThat(api("/api/geocode", "reset-key").getStatus().value()).isEqualTo(429);
		assertThat(send(HttpMethod.DELETE, "/actuator/ratelimits/geocode-burst/reset-key", null, false).getStatus()
			.value()).isEqualTo(401);
		assertThat(api("/api/geocode", "reset-key").getStatus().value()).isEqualTo(429);
		assertThat(
				send(HttpMethod.DELETE, "/actuator/ratelimits/geocode-burst/reset-key", null, true).getStatus().value())
			.isEqualTo(204);
		assertThat(json(get("/actuator/ratelimits/geocode-burst/reset-key")).read("$.limits[0].remaining", Long.class))
			.isEqualTo(10);
		EntityExchangeResult<byte[]> next = api("/api/geocode", "reset-key");
		assertThat(next.getStatus().value()).isEqualTo(200);
		assertThat(header(next, "X-RateLimit-Remaining")).isEqualTo("9");
	}

	@Test
	void aClientKeyMayContainASlash() {
		String apiKey = "ab/CD+ef/==";
		for (int i = 0; i < 3; i++) {
			assertThat(api("/api/geocode", apiKey).getStatus().value()).isEqualTo(200);
		}
		EntityExchangeResult<byte[]> state = get("/actuator/ratelimits/geocode-burst/" + apiKey);
		assertThat(state.getStatus().value()).isEqualTo(200);
		assertThat(json(state).read("$.limits[0].remaining", Long.class)).isEqualTo(7);
		assertThat(
				send(HttpMethod.DELETE, "/actuator/ratelimits/geocode-burst/" + apiKey, null, true).getStatus().value())
			.isEqualTo(204);
		assertThat(header(api("/api/geocode", apiKey), "X-RateLimit-Remaining")).isEqualTo("9");
	}

	@Test
	void countsTheFiltersAllowedAndRejectedRequestsWithTheServletSidesTags() {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			statuses.add(api("/api/counted", "counted-key").getStatus().value());
		}
		assertThat(statuses).containsExactly(200, 200, 200, 200, 429, 429, 429);
		assertThat(requests("counted", "allowed")).isEqualTo(4);
		assertThat(requests("counted", "rejected")).isEqualTo(3);
		assertThat(json(get("/actuator/metrics/ratelimit.requests")).read("$.availableTags[*].tag", List.class))
			.containsExactlyInAnyOrder("policy", "tier", "outcome");
	}

	@Test
	void countsTheDecisionsOfAnAnnotatedMonoHandler() {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			statuses.add(this.client.get()
				.uri("/api/annotated")
				.header("X-Client", "annotated-client")
				.exchange()
				.expectBody()
				.returnResult()
				.getStatus()
				.value());
		}
		assertThat(statuses).containsExactly(200, 200, 429);
		assertThat(requests("annotated", "allowed")).isEqualTo(2);
		assertThat(requests("annotated", "rejected")).isEqualTo(1);
	}

	@Test
	void healthShowsTheRateLimitBackendUp() {
		EntityExchangeResult<byte[]> response = get("/actuator/health/rateLimit");
		assertThat(response.getStatus().value()).isEqualTo(200);
		DocumentContext json = json(response);
		assertThat(json.read("$.status", String.class)).isEqualTo("UP");
		assertThat(json.read("$.details.backend", String.class)).isEqualTo("memory");
		assertThat(json.read("$.details.failureMode", String.class)).isEqualTo("deny");
	}

	@Test
	void anOverridePostedThroughTheEndpointAppliesFromTheNextRequestUntilItIsRemoved() {
		// a client whose name holds a slash: the path's remaining segments name it
		String customer = "partner/big-customer";
		for (int i = 0; i < 5; i++) {
			assertThat(api("/api/things", customer).getStatus().value()).isEqualTo(200);
		}
		assertThat(api("/api/things", customer).getStatus().value()).isEqualTo(429);

		String inAnHour = this.clock.now().plus(Duration.ofHours(1)).toString();
		EntityExchangeResult<byte[]> set = send(HttpMethod.POST, OVERRIDES + customer,
				"{\"limits\":[{\"rate\":\"50/1h\"}],\"expires\":\"" + inAnHour + "\"}", true);
		assertThat(set.getStatus().value()).isEqualTo(204);

		DocumentContext one = json(get(OVERRIDES + customer));
		assertThat(one.read("$.policy", String.class)).isEqualTo("api");
		assertThat(one.read("$.limits[0].rate", String.class)).isEqualTo("50/1h");
		assertThat(one.read("$.limits[0].limit", Long.class)).isEqualTo(50);
		assertThat(one.read("$.expires", String.class)).isEqualTo(inAnHour);
		assertThat(json(get("/actuator/ratelimitoverrides")).read("$.overrides[*].policy", List.class))
			.containsExactly("api");

		// the five spent under the tier's 5/1h stay spent under 50/1h: 45 left, one taken
		EntityExchangeResult<byte[]> raised = api("/api/things", customer);
		assertThat(raised.getStatus().value()).isEqualTo(200);
		assertThat(header(raised, "RateLimit-Policy")).startsWith("\"api\";q=50;");
		assertThat(header(raised, "RateLimit")).startsWith("\"api\";r=44;");
		// another client keeps its tier's limits
		assertThat(header(api("/api/things", "someone-else"), "RateLimit-Policy")).startsWith("\"api\";q=5;");

		assertThat(send(HttpMethod.DELETE, OVERRIDES + customer, null, true).getStatus().value()).isEqualTo(204);
		assertThat(get(OVERRIDES + customer).getStatus().value()).isEqualTo(404);
		EntityExchangeResult<byte[]> restored = api("/api/things", customer);
		assertThat(header(restored, "RateLimit-Policy")).startsWith("\"api\";q=5;");
		assertThat(restored.getStatus().value()).isEqualTo(429);
	}

	@Test
	void badBodiesAreRefusedAsOnTheServletSideAndChangeNothing() {
		String path = OVERRIDES + "careful-customer";
		assertRefused(send(HttpMethod.POST, "/actuator/ratelimitoverrides/no-such-policy/careful-customer",
				"{\"limits\":[{\"rate\":\"50/1h\"}]}", true), "No rate-limit policy named 'no-such-policy'");
		assertRefused(send(HttpMethod.POST, path, "{\"limits\":\"50/1h\"}", true), "'limits' must be a list");
		assertRefused(send(HttpMethod.POST, path, "{\"limits\":[{\"rat\":\"50/1h\"}]}", true),
				"limits[0].rat: is not a key of a limit");
		assertRefused(send(HttpMethod.POST, path, "{\"limits\":[{\"rate\":\"0/1h\"}]}", true), "limits[0].rate");
		assertRefused(send(HttpMethod.POST, path, "{\"limits\":[{\"algorithm\":\"sliding-bucket\",\"rate\":\"1/1s\"}]}",
				true), "limits[0].algorithm");
		assertRefused(send(HttpMethod.POST, path, "{\"limits\":[{\"rate\":\"50/1h\"}],\"expires\":\"tomorrow\"}", true),
				"'expires' must be an ISO-8601 instant");
		assertRefused(send(HttpMethod.POST, path,
				"{\"limits\":[{\"rate\":\"50/1h\"}],\"expires\":\"2020-01-01T00:00:00Z\"}", true),
				"'expires' lies in the past");
		assertRefused(send(HttpMethod.POST, path, "{\"expires\":\"2100-01-01T00:00:00Z\"}", true),
				"The body names no 'limits'");
		assertRefused(send(HttpMethod.POST, path, "not json", true), "The body must be a JSON object");
		assertRefused(send(HttpMethod.POST, path, null, true), "The body must be a JSON object");

		assertThat(json(get("/actuator/ratelimitoverrides")).read("$.overrides", List.class)).isEmpty();
		assertThat(header(api("/api/things", "careful-customer"), "RateLimit-Policy")).startsWith("\"api\";q=5;");
	}

	@Test
	void aBodyLargerThanAnyOverrideIsRefusedUnread() {
		String padding = "x".repeat(70 * 1024);
		EntityExchangeResult<byte[]> response = send(HttpMethod.POST, OVERRIDES + "large-customer",
				"{\"limits\":[{\"rate\":\"50/1h\"}],\"padding\":\"" + padding + "\"}", true);
		assertThat(response.getStatus().value()).isEqualTo(413);
		assertThat(json(response).read("$.message", String.class)).contains("at most 65536 bytes");
		assertThat(this.overrides.list()).isEmpty();
	}

	@Test
	void onlyAnOperatorMaySetOrRemoveAnOverride() {
		assertThat(get("/actuator/ratelimitoverrides").getStatus().value()).isEqualTo(200);
		assertThat(send(HttpMethod.POST, OVERRIDES + "x", "{\"limits\":[{\"rate\":\"50/1h\"}]}", false).getStatus()
			.value()).isEqualTo(401);
		assertThat(this.overrides.list()).isEmpty();
		assertThat(send(HttpMethod.DELETE, OVERRIDES + "x", null, false).getStatus().value()).isEqualTo(401);
	}

	@Test
	void aLiveReloadReplacesTheReactiveFiltersRulesFromTheNextRequest(@Autowired ConfigurableEnvironment environment,
			@Autowired RateLimitConfigurationReloader reloader, @Autowired RateLimitWebFilter filter) {
		assertThat(api("/api/reloaded", "reloading-client").getResponseHeaders().get("RateLimit")).isNull();
		Map<String, Object> changed = new LinkedHashMap<>();
		changed.put("ratelimit.filters[0].patterns", "/api/geocode");
		changed.put("ratelimit.filters[0].methods", "GET");
		changed.put("ratelimit.filters[0].policies", "geocode-burst");
		changed.put("ratelimit.filters[1].patterns", "/api/counted");
		changed.put("ratelimit.filters[1].policies", "counted");
		changed.put("ratelimit.filters[2].patterns", "/api/things");
		changed.put("ratelimit.filters[2].policies", "api");
		changed.put("ratelimit.filters[3].patterns", "/api/reloaded");
		changed.put("ratelimit.filters[3].policies", "reloaded");
		environment.getPropertySources().addFirst(new MapPropertySource("reloaded-filters", changed));
		try {
			assertThat(reloader.reload(changed.keySet())).isTrue();
			assertThat(filter.getRules()).hasSize(4);
			for (int i = 0; i < 3; i++) {
				EntityExchangeResult<byte[]> limited = this.client.get()
					.uri("/api/reloaded")
					.header("X-Client", "reloading-client")
					.exchange()
					.expectBody()
					.returnResult();
				assertThat(limited.getStatus().value()).isEqualTo(200);
				assertThat(header(limited, "RateLimit-Policy")).isEqualTo("\"reloaded\";q=3;w=3600");
			}
			assertThat(this.client.get()
				.uri("/api/reloaded")
				.header("X-Client", "reloading-client")
				.exchange()
				.expectBody()
				.returnResult()
				.getStatus()
				.value()).isEqualTo(429);
			assertThat(json(get("/actuator/ratelimits")).read("$.filters[3].policies", List.class))
				.containsExactly("reloaded");
		}
		finally {
			// the configuration the other tests expect
			environment.getPropertySources().remove("reloaded-filters");
			reloader.reload(changed.keySet());
		}
		assertThat(filter.getRules()).hasSize(3);
		assertThat(api("/api/reloaded", "reloading-client").getResponseHeaders().get("RateLimit")).isNull();
	}

	private double requests(String policy, String outcome) {
		EntityExchangeResult<byte[]> response = get(
				"/actuator/metrics/ratelimit.requests?tag=policy:" + policy + "&tag=tier:free&tag=outcome:" + outcome);
		assertThat(response.getStatus().value()).isEqualTo(200);
		return json(response).read("$.measurements[0].value", Double.class);
	}

	private EntityExchangeResult<byte[]> api(String path, String apiKey) {
		return this.client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody().returnResult();
	}

	private EntityExchangeResult<byte[]> get(String path) {
		return send(HttpMethod.GET, path, null, false);
	}

	private EntityExchangeResult<byte[]> send(HttpMethod method, String path, @Nullable String json, boolean operator) {
		WebTestClient.RequestBodySpec request = this.client.method(method).uri(path);
		if (operator) {
			request.headers((headers) -> headers.setBasicAuth(ReactiveActuatorTestApplication.OPERATOR,
					ReactiveActuatorTestApplication.OPERATOR_PASSWORD));
		}
		if (json != null) {
			request.contentType(MediaType.APPLICATION_JSON).bodyValue(json);
		}
		return request.exchange().expectBody().returnResult();
	}

	private static DocumentContext json(EntityExchangeResult<byte[]> response) {
		return JsonPath.parse(new String(response.getResponseBodyContent(), StandardCharsets.UTF_8));
	}

	private static String header(EntityExchangeResult<byte[]> response, String name) {
		String value = response.getResponseHeaders().getFirst(name);
		assertThat(value).as(name).isNotNull();
		return value;
	}

	private static void assertRefused(EntityExchangeResult<byte[]> response, String reason) {
		String body = new String(response.getResponseBodyContent(), StandardCharsets.UTF_8);
		assertThat(response.getStatus().value()).as(body).isEqualTo(400);
		assertThat(response.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
		assertThat(body).contains(reason);
	}

}
