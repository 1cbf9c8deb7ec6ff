package dev.ratelimit.spring.runtime;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the tests of {@link ManagementPortTestApplication} send: its configuration, the
 * one client they name, and the calls they repeat.
 */
final class ManagementPortCalls {

	/** Both endpoints exposed, an {@code ip} policy of 2/1m on {@code /api/**}. */
	static final String EXPOSED = "management.endpoints.web.exposure.include=ratelimits,ratelimitoverrides";

	static final String POLICY_KEY = "ratelimit.policies.per-address.key=ip";

	static final String POLICY_RATE = "ratelimit.policies.per-address.limits[0].rate=2/1m";

	static final String FILTER_PATTERNS = "ratelimit.filters[0].patterns=/api/**";

	static final String FILTER_POLICIES = "ratelimit.filters[0].policies=per-address";

	/** The one client: the test's own address, in the {@code ip} policy. */
	static final String CLIENT = "/per-address/127.0.0.1";

	/** What a client would give itself. */
	static final String RAISED = "{\"limits\":[{\"rate\":\"1000000/1s\"}]}";

	/** An override of 5/1m. */
	static final String FIVE_A_MINUTE = "{\"limits\":[{\"rate\":\"5/1m\"}]}";

	private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE", "PATCH");

	private ManagementPortCalls() {
	}

	/**
	 * Asserts that every method on both endpoints, and on one client of each, answers 404
	 * to the operator, and {@code anonymous} without credentials.
	 * @param application the application's port
	 * @param basePath where the endpoints would be, such as {@code /actuator}
	 * @param anonymous 404, or 401 where Spring Security's {@code EndpointRequest} rules
	 * guard the path (on the application's port once the management port is off)
	 */
	static void assertNothingIsServed(Http application, String basePath, int anonymous) throws Exception {
		for (String path : List.of(basePath + "/ratelimitoverrides", basePath + "/ratelimitoverrides" + CLIENT,
				basePath + "/ratelimits", basePath + "/ratelimits" + CLIENT)) {
			for (String method : METHODS) {
				String body = (method.equals("GET") || method.equals("DELETE")) ? null : RAISED;
				assertThat(application.operator(method, path, body).statusCode())
					.as("%s %s by the operator", method, path)
					.isEqualTo(404);
				assertThat(application.anonymous(method, path, body).statusCode()).as("%s %s", method, path)
					.isEqualTo(anonymous);
			}
		}
	}

	/**
	 * Returns the statuses of six calls to the API.
	 */
	static List<Integer> sixCalls(Http application) throws Exception {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			statuses.add(application.api("any").statusCode());
		}
		return statuses;
	}

}
