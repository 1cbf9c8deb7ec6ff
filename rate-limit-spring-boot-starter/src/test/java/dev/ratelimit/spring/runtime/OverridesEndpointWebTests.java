package dev.ratelimit.spring.runtime;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.overrides.LimitOverrides;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-client overrides through the {@code ratelimitoverrides} endpoint over real HTTP, on
 * the in-memory backend: set, read, list, expire and remove, what a client gets
 * meanwhile, and bad input refused with a 400 that names the problem while nothing
 * changes.
 */
@SpringBootTest(classes = RuntimeTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.api.key=api-key", "ratelimit.policies.api.tiers.free[0].rate=5/1h",
				"ratelimit.filters[0].patterns=/api/**", "ratelimit.filters[0].policies=api",
				"management.endpoints.web.exposure.include=ratelimits,ratelimitoverrides" })
class OverridesEndpointWebTests {

	/** The test clock's start, 2023-11-14T22:13:20Z, plus an hour. */
	private static final String IN_AN_HOUR = "2023-11-14T23:13:20Z";

	@LocalServerPort
	private int port;

	@Autowired
	private MutableTimeSource clock;

	@Autowired
	private LimitOverrides overrides;

	@AfterEach
	void removeOverrides() {
		this.overrides.list().forEach((override) -> this.overrides.remove(override.policy(), override.client()));
	}

	@Test
	void anOverrideReplacesTheTierLimitsUntilItExpiresAndSpentPermitsCarryOver() throws Exception {
		Http http = new Http(this.port);
		for (int i = 0; i < 5; i++) {
			assertThat(http.api("big-customer").statusCode()).isEqualTo(200);
		}
		assertThat(http.api("big-customer").statusCode()).isEqualTo(429);

		HttpResponse<String> set = http.operator("POST", "/actuator/ratelimitoverrides/api/big-customer",
				"{\"limits\":[{\"rate\":\"50/1h\"}],\"expires\":\"" + IN_AN_HOUR + "\"}");
		assertThat(set.statusCode()).isEqualTo(204);

		DocumentContext one = JsonPath.parse(http.get("/actuator/ratelimitoverrides/api/big-customer").body());
		assertThat(one.read("$.policy", String.class)).isEqualTo("api");
		assertThat(one.read("$.limits[0].rate", String.class)).isEqualTo("50/1h");
		assertThat(one.read("$.limits[0].limit", Long.class)).isEqualTo(50);
		assertThat(one.read("$.expires", String.class)).isEqualTo(IN_AN_HOUR);
		DocumentContext all = JsonPath.parse(http.get("/actuator/ratelimitoverrides").body());
		assertThat(all.read("$.overrides[*].policy", List.class)).containsExactly("api");

		// the five spent under the tier's 5/1h stay spent under 50/1h: 45 left, one taken
		HttpResponse<String> raised = http.api("big-customer");
		assertThat(raised.statusCode()).isEqualTo(200);
		assertThat(raised.headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=50;"));
		assertThat(raised.headers().firstValue("RateLimit"))
			.hasValueSatisfying((limit) -> assertThat(limit).startsWith("\"api\";r=44;"));
		// another client keeps its tier's limits
		assertThat(http.api("someone-else").headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=5;"));

		this.clock.advance(Duration.ofHours(1));
		assertThat(http.get("/actuator/ratelimitoverrides/api/big-customer").statusCode()).isEqualTo(404);
		assertThat(JsonPath.parse(http.get("/actuator/ratelimitoverrides").body()).read("$.overrides", List.class))
			.isEmpty();
		assertThat(http.api("big-customer").headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=5;"));
	}

	@Test
	void removingAnOverrideRestoresTheTierLimitsFromTheNextCall() throws Exception {
		Http http = new Http(this.port);
		assertThat(http
			.operator("POST", "/actuator/ratelimitoverrides/api/removed-customer",
					"{\"limits\":[{\"algorithm\":\"fixed-window\",\"rate\":\"1000/1h\"}]}")
			.statusCode()).isEqualTo(204);
		assertThat(http.api("removed-customer").headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=1000;"));
		assertThat(JsonPath.parse(http.get("/actuator/ratelimitoverrides/api/removed-customer").body())
			.read("$.expires", String.class)).isNull();

		assertThat(http.operator("DELETE", "/actuator/ratelimitoverrides/api/removed-customer", null).statusCode())
			.isEqualTo(204);
		assertThat(http.get("/actuator/ratelimitoverrides/api/removed-customer").statusCode()).isEqualTo(404);
		assertThat(http.api("removed-customer").headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=5;"));
	}

	@Test
	void badRequestsAreRefusedNamingTheProblemAndChangeNothing() throws Exception {
		Http http = new Http(this.port);
		String path = "/actuator/ratelimitoverrides/api/careful-customer";
		assertRefused(http.operator("POST", "/actuator/ratelimitoverrides/no-such-policy/careful-customer",
				"{\"limits\":[{\"rate\":\"50/1h\"}]}"), "No rate-limit policy named 'no-such-policy'");
		assertRefused(http.operator("POST", path, "{\"limits\":\"50/1h\"}"), "'limits' must be a list");
		assertRefused(http.operator("POST", path, "{\"limits\":[{\"rat\":\"50/1h\"}]}"),
				"limits[0].rat: is not a key of a limit");
		assertRefused(http.operator("POST", path, "{\"limits\":[{\"rate\":\"0/1h\"}]}"), "limits[0].rate");
		assertRefused(
				http.operator("POST", path, "{\"limits\":[{\"algorithm\":\"sliding-bucket\",\"rate\":\"1/1s\"}]}"),
				"limits[0].algorithm");
		assertRefused(http.operator("POST", path, "{\"limits\":[{\"rate\":\"50/1h\"}],\"expires\":\"tomorrow\"}"),
				"'expires' must be an ISO-8601 instant");
		assertRefused(
				http.operator("POST", path, "{\"limits\":[{\"rate\":\"50/1h\"}],\"expires\":\"2020-01-01T00:00:00Z\"}"),
				"'expires' lies in the past");
		assertThat(http.operator("POST", path, "{\"expires\":\"" + IN_AN_HOUR + "\"}").statusCode()).isEqualTo(400);
		assertThat(http.operator("POST", path, "not json").statusCode()).isEqualTo(400);

		assertThat(JsonPath.parse(http.get("/actuator/ratelimitoverrides").body()).read("$.overrides", List.class))
			.isEmpty();
		assertThat(http.api("careful-customer").headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=5;"));
	}

	@Test
	void aBodyLargerThanAnyOverrideIsRefusedUnread() throws Exception {
		String padding = "x".repeat(70 * 1024);
		HttpResponse<String> response = new Http(this.port).operator("POST",
				"/actuator/ratelimitoverrides/api/large-customer",
				"{\"limits\":[{\"rate\":\"50/1h\"}],\"padding\":\"" + padding + "\"}");
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.body()).contains("at most 65536 bytes");
		assertThat(this.overrides.list()).isEmpty();
	}

	@Test
	void onlyAnOperatorMaySetOrRemoveAnOverride() throws Exception {
		Http http = new Http(this.port);
		assertThat(http.get("/actuator/ratelimitoverrides").statusCode()).isEqualTo(200);
		java.net.http.HttpResponse<String> anonymous = java.net.http.HttpClient.newHttpClient()
			.send(java.net.http.HttpRequest
				.newBuilder(java.net.URI.create("http://127.0.0.1:" + this.port + "/actuator/ratelimitoverrides/api/x"))
				.header("Content-Type", "application/json")
				.POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"limits\":[{\"rate\":\"50/1h\"}]}"))
				.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
		assertThat(anonymous.statusCode()).isEqualTo(401);
		assertThat(this.overrides.list()).isEmpty();
	}

	private static void assertRefused(HttpResponse<String> response, String reason) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		assertThat(response.body()).contains(reason);
	}

}
