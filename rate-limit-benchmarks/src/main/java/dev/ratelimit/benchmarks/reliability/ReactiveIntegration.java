package dev.ratelimit.benchmarks.reliability;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.benchmarks.reliability.AppIntegration.Recorder;
import dev.ratelimit.benchmarks.reliability.AppIntegration.Version;
import dev.ratelimit.benchmarks.reliability.SampleIntegration.WrongPasswords;

/**
 * The cases of issue 32 that one instance of the reactive example (WebFlux, Netty, in
 * memory, the actuator on a management port) shows: a {@code count-if} failure answered
 * by a {@code WebExceptionHandler}, IPv6 clients of one /64, the overrides' {@code POST}
 * on the application's port, and wrong HTTP Basic passwords sent together.
 */
final class ReactiveIntegration implements AppIntegration.Cases {

	/**
	 * What Spring Security's {@code AuthenticationWebFilter} logs at DEBUG for a wrong
	 * password of a known user, whose password the encoder checked.
	 */
	static final String PASSWORD_MISMATCH = "Authentication failed: Invalid Credentials";

	private static final String OVERRIDDEN = "198.51.100.80";

	private static final int ERRORS = 12;

	private final int rounds;

	private final int errorRounds;

	ReactiveIntegration(Settings settings) {
		this.rounds = settings.pick(1, 3);
		this.errorRounds = settings.pick(5, 10);
	}

	@Override
	public void describe(Recorder recorder) {
		recorder.note("`f1.reactive.error-signal-400`: " + ERRORS + " `GET /api/quote` without `symbol`, one after "
				+ "another: WebFlux signals a `ServerWebInputException`, which no `@ExceptionHandler` of the example "
				+ "handles and Spring Boot's `WebExceptionHandler` answers 400 outside every web filter; a policy "
				+ "keyed by `X-Client` counts responses of status 400 or more, 3/15m. Each 400 beyond 3 is one the "
				+ "policy did not count. " + this.errorRounds + " rounds, a new client each; the table shows the "
				+ "one with the most 400s.");
		recorder.note("`f2.reactive.ipv6-one-64`: 6 `GET /api/symbols` through the trusted proxy, from "
				+ "`2001:db8:1:2::1` to `::6` (one /64), against a policy of 2/1m by address; the example sets no "
				+ "`client.ipv6-prefix-length`, so the default decides.");
		recorder.note("`f3.reactive.overrides-post-app-port`: the example exposes `ratelimitoverrides` "
				+ "(`management.endpoints.web.exposure.include`) with `management.server.port` set; its security "
				+ "rules cover `/actuator/ratelimits/**` only, as an application that relies on the management "
				+ "port being unreachable from outside would. A client without credentials sends `POST "
				+ "/actuator/ratelimitoverrides/by-address/" + OVERRIDDEN
				+ "` (1000/1m) to the application's port, then 20 requests to `/api/symbols` (2/1m by address): "
				+ "`admitted-of-20`. `management-port-status`: the same `POST` on the management port, for another "
				+ "client.");
		recorder.note("`f5.reactive.wrong-basic-together`: " + SampleIntegration.TOGETHER + " requests with the "
				+ "operator's name and wrong HTTP Basic passwords, sent together from one address, with a rule "
				+ "before Spring Security of 10/15m by address counting 401s (the sample's `basic-auth-failures`; "
				+ "the example has none of its own). `password-checks`: the lines Spring Security's "
				+ "`AuthenticationWebFilter` logs at DEBUG for each wrong password of the operator, which its "
				+ "bcrypt encoder checked." + SampleIntegration.rounds(this.rounds, "checks"));
	}

	@Override
	public void run(Version version, Processes processes, Recorder recorder) {
		try (IntegrationApp app = start(version, processes)) {
			if (!app.started()) {
				throw new IllegalStateException(app + " did not start: " + app.failureDescription());
			}
			errorSignal(version, app, recorder);
			ipv6(version, app, recorder);
			overridesOnTheApplicationPort(version, app, recorder);
			wrongBasicPasswordsTogether(version, app, recorder);
		}
	}

	private static IntegrationApp start(Version version, Processes processes) {
		return version.reactive("webflux")
			.managementPort()
			.properties("ratelimit.client.trusted-proxies", "127.0.0.1/32", "management.endpoints.web.exposure.include",
					"health,prometheus,ratelimits,ratelimitoverrides",
					"logging.level.org.springframework.security.web.server.authentication.AuthenticationWebFilter",
					"DEBUG", "ratelimit.policies.errors.key", "header:X-Client", "ratelimit.policies.errors.count-if",
					"#{#response.status >= 400}", "ratelimit.policies.errors.limits[0].algorithm", "fixed-window",
					"ratelimit.policies.errors.limits[0].rate", "3/15m", "ratelimit.policies.by-address.key", "ip",
					"ratelimit.policies.by-address.limits[0].algorithm", "fixed-window",
					"ratelimit.policies.by-address.limits[0].rate", "2/1m",
					"ratelimit.policies.basic-auth-failures.key", "ip",
					"ratelimit.policies.basic-auth-failures.count-if", "#{#response.status == 401}",
					"ratelimit.policies.basic-auth-failures.limits[0].algorithm", "fixed-window",
					"ratelimit.policies.basic-auth-failures.limits[0].rate", "10/15m", "ratelimit.filters[0].patterns",
					"/api/quote", "ratelimit.filters[0].policies", "errors", "ratelimit.filters[1].patterns",
					"/api/symbols", "ratelimit.filters[1].policies", "by-address", "ratelimit.filters[2].patterns",
					"/**", "ratelimit.filters[2].before-security", "true", "ratelimit.filters[2].when",
					"#{#request.headers.getFirst('Authorization') != null}", "ratelimit.filters[2].policies",
					"basic-auth-failures")
			.start(processes);
	}

	private void errorSignal(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f1.reactive.error-signal-400";
		long most400 = -1;
		long refused = -1;
		List<Long> rounds = new ArrayList<>();
		for (int round = 0; round < this.errorRounds; round++) {
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < ERRORS; i++) {
				statuses.add(app.status(HttpCall.get("/api/quote").header("X-Client", "errors-" + round)));
			}
			long answered = AppIntegration.count(statuses, 400);
			rounds.add(answered);
			if (answered > most400) {
				most400 = answered;
				refused = AppIntegration.count(statuses, 429);
			}
		}
		recorder.add(version, row, "answered-400", most400, Target.exactly(3));
		recorder.add(version, row, "refused-429", refused, Target.exactly(ERRORS - 3));
		recorder.note("`" + row + "` " + version.label() + ", 400s of each round: " + rounds + ".");
	}

	private static void ipv6(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f2.reactive.ipv6-one-64";
		List<Integer> statuses = new ArrayList<>();
		for (int i = 1; i <= 6; i++) {
			statuses.add(app.status(HttpCall.get("/api/symbols").forwardedFor("2001:db8:1:2::" + i)));
		}
		recorder.add(version, row, "admitted", AppIntegration.count(statuses, 200), Target.exactly(2));
		recorder.add(version, row, "refused-429", AppIntegration.count(statuses, 429), Target.exactly(4));
	}

	private static void overridesOnTheApplicationPort(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f3.reactive.overrides-post-app-port";
		String body = "{\"limits\":[{\"rate\":\"1000/1m\"}]}";
		recorder.add(
				version, row, "anonymous-status", app.status(HttpCall
					.post("/actuator/ratelimitoverrides/by-address/" + OVERRIDDEN, "application/json", body)),
				Target.exactly(404));
		long admitted = 0;
		for (int i = 0; i < 20; i++) {
			admitted += (app.status(HttpCall.get("/api/symbols").forwardedFor(OVERRIDDEN)) == 200) ? 1 : 0;
		}
		recorder.add(version, row, "admitted-of-20", admitted, Target.exactly(2));
		recorder.add(version, row, "management-port-status",
				app.status(
						HttpCall.post("/actuator/ratelimitoverrides/by-address/198.51.100.81", "application/json", body)
							.toManagementPort()),
				Target.exactly(204));
	}

	private void wrongBasicPasswordsTogether(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f5.reactive.wrong-basic-together";
		WrongPasswords worst = null;
		List<String> rounds = new ArrayList<>();
		for (int round = 0; round < this.rounds; round++) {
			WrongPasswords burst = WrongPasswords.sendTogether(app, HttpCall.get("/api/symbols"),
					"198.51.100." + (90 + round), PASSWORD_MISMATCH);
			rounds.add(burst.checks() + " checks, " + burst.refused() + " refused, " + burst.cpuMillis() + " ms CPU");
			if (worst == null || burst.checks() > worst.checks()) {
				worst = burst;
			}
		}
		worst.record(version, row, recorder, 10);
		if (this.rounds > 1) {
			recorder.note("`" + row + "` " + version.label() + ", each round: " + String.join("; ", rounds) + ".");
		}
	}

}
