package dev.ratelimit.spring.reactive;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calls one port of a {@link ReactiveManagementPortTestApplication} over real HTTP, as a
 * client, as the operator or without credentials; and what its tests share: their
 * configuration, the one client they name, and the checks they repeat.
 */
final class ManagementPortClient {

	/** Both endpoints exposed, an {@code ip} policy of 2/1m on {@code /api/**}. */
	static final String EXPOSED = "management.endpoints.web.exposure.include=ratelimits,ratelimitoverrides";

	static final String REACTIVE = "spring.main.web-application-type=reactive";

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

	private static final List<HttpMethod> METHODS = List.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.PUT,
			HttpMethod.DELETE, HttpMethod.PATCH);

	private final WebTestClient client;

	ManagementPortClient(int port) {
		this.client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
	}

	EntityExchangeResult<byte[]> operator(HttpMethod method, String path, @Nullable String json) {
		return send(method, path, json, true);
	}

	int anonymous(HttpMethod method, String path, @Nullable String json) {
		return send(method, path, json, false).getStatus().value();
	}

	/**
	 * Returns the statuses of six calls to the API.
	 */
	List<Integer> sixCalls() {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			statuses.add(this.client.get().uri("/api/things").exchange().returnResult().getStatus().value());
		}
		return statuses;
	}

	/**
	 * Asserts that every method on both endpoints, and on one client of each, answers 404
	 * to the operator, and {@code anonymous} without credentials.
	 * @param basePath where the endpoints would be, such as {@code /actuator}
	 * @param anonymous 404, or 401 where Spring Security's {@code EndpointRequest} rules
	 * guard the path (on the application's port once the management port is off)
	 */
	void assertNothingIsServed(String basePath, int anonymous) {
		for (String path : List.of(basePath + "/ratelimitoverrides", basePath + "/ratelimitoverrides" + CLIENT,
				basePath + "/ratelimits", basePath + "/ratelimits" + CLIENT)) {
			for (HttpMethod method : METHODS) {
				String body = (method == HttpMethod.GET || method == HttpMethod.DELETE) ? null : RAISED;
				assertThat(operator(method, path, body).getStatus().value()).as("%s %s by the operator", method, path)
					.isEqualTo(404);
				assertThat(anonymous(method, path, body)).as("%s %s", method, path).isEqualTo(anonymous);
			}
		}
	}

	private EntityExchangeResult<byte[]> send(HttpMethod method, String path, @Nullable String json, boolean operator) {
		WebTestClient.RequestBodySpec request = this.client.method(method).uri(path);
		if (operator) {
			request.headers((headers) -> headers.setBasicAuth(ReactiveManagementPortTestApplication.OPERATOR,
					ReactiveManagementPortTestApplication.OPERATOR_PASSWORD));
		}
		if (json != null) {
			request.contentType(MediaType.APPLICATION_JSON).bodyValue(json);
		}
		return request.exchange().expectBody().returnResult();
	}

}
