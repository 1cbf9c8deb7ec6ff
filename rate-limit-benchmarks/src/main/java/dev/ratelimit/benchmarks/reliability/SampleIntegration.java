package dev.ratelimit.benchmarks.reliability;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.benchmarks.reliability.AppIntegration.Recorder;
import dev.ratelimit.benchmarks.reliability.AppIntegration.Version;

/**
 * The cases of issue 32 that one instance of the sample (servlet, Tomcat, in memory, the
 * actuator on a management port) shows: wrong logins and wrong HTTP Basic passwords sent
 * together, unknown API keys, the overrides' {@code POST} on the application's port, and
 * a client whose tier changes to one of another algorithm.
 */
final class SampleIntegration implements AppIntegration.Cases {

	/**
	 * What Spring Security's {@code DaoAuthenticationProvider} logs at DEBUG for each
	 * password its encoder checked and found wrong.
	 */
	static final String PASSWORD_MISMATCH = "Failed to authenticate since password does not match stored value";

	static final String PATH = "/api/reverse?lat=34&lon=-6";

	static final int TOGETHER = 50;

	static final int UNKNOWN_KEYS = 30;

	private static final String FORM = "application/x-www-form-urlencoded";

	private final int rounds;

	SampleIntegration(Settings settings) {
		this.rounds = settings.pick(1, 3);
	}

	@Override
	public void describe(Recorder recorder) {
		recorder.note("`f1.sample.wrong-logins-together`: " + TOGETHER + " `POST /api/login` with one username and "
				+ "wrong passwords, sent together (each on a connection opened beforehand, all written at once) "
				+ "from one address, against the sample's `login-failures-user` (5/15m by username, its "
				+ "application.yml, the same in both versions) and `login-failures-ip` (20/15m). `tries`: the 401s, "
				+ "each a password the login compared; `refused-429`: refused before the login ran."
				+ rounds(this.rounds, "tries"));
		recorder.note("`f5.sample.wrong-basic-together`: " + TOGETHER + " requests with the operator's name and "
				+ "wrong HTTP Basic passwords, sent together from one address, with the sample's "
				+ "`basic-auth-failures` (10/15m by address, counting 401s, `before-security: true`) given on the "
				+ "command line to both versions (" + AppIntegration.BEFORE_COMMIT + " does not know "
				+ "`before-security` and runs the rule after Spring Security, which answers 401 before it). "
				+ "`password-checks`: the lines Spring Security's `DaoAuthenticationProvider` logs at DEBUG for "
				+ "each password its bcrypt encoder checked and found wrong; `app-cpu-ms`: the CPU time the "
				+ "application's process used over the burst, from the operating system."
				+ rounds(this.rounds, "checks"));
		recorder.note("`f5.sample.unknown-api-keys`: " + UNKNOWN_KEYS + " requests one after another, each with "
				+ "another unknown `X-API-Key`, from one address, with the sample's `api-key-failures` (20/15m "
				+ "by address, counting 401s, check-then-charge, before Spring Security).");
		recorder.note("`f3.sample.overrides-post-app-port`: with `management.server.port` set, `POST "
				+ "/actuator/ratelimitoverrides/api/ip:198.51.100.60` (`{\"limits\":[{\"rate\":\"1000/1m\"}]}`) "
				+ "on the application's port as the sample's operator and without credentials, and on the "
				+ "management port as the operator. The sample's security asks for the operator on that path "
				+ "on every port.");
		recorder.note("`f8c.sample.tier-switch`: a policy keyed by address whose anonymous tier is a fixed window "
				+ "of 5/1m and whose free tier a token bucket of 5/1m; 6 requests without an API key, then 6 with "
				+ "`demo-free`'s (tier free), from one address. `admitted-after-switch` is 5 when the free tier's "
				+ "limit starts fresh, 0 when it takes over the spent share (branch fix/tiers, merged into main "
				+ "at 1e63ea9).");
	}

	/** What the notes say of rounds, if there are several. */
	static String rounds(int rounds, String measure) {
		return (rounds == 1) ? ""
				: " " + rounds + " rounds, each from a new address (and username); the table shows the one with the "
						+ "most " + measure + ".";
	}

	@Override
	public void run(Version version, Processes processes, Recorder recorder) {
		try (IntegrationApp app = start(version, processes)) {
			if (!app.started()) {
				throw new IllegalStateException(app + " did not start: " + app.failureDescription());
			}
			wrongLoginsTogether(version, app, recorder);
			wrongBasicPasswordsTogether(version, app, recorder);
			unknownApiKeys(version, app, recorder);
			overridesOnTheApplicationPort(version, app, recorder);
			tierSwitch(version, app, recorder);
		}
	}

	private static IntegrationApp start(Version version, Processes processes) {
		return version.sample("servlet")
			.managementPort()
			.properties("ratelimit.client.trusted-proxies", "127.0.0.1/32",
					"logging.level.org.springframework.security.authentication.dao.DaoAuthenticationProvider", "DEBUG",
					// the sample's application.yml after issue 32, for both versions
					"ratelimit.policies.basic-auth-failures.key", "ip",
					"ratelimit.policies.basic-auth-failures.count-if", "#{#response.status == 401}",
					"ratelimit.policies.basic-auth-failures.limits[0].algorithm", "fixed-window",
					"ratelimit.policies.basic-auth-failures.limits[0].rate", "10/15m",
					"ratelimit.policies.api-key-failures.key", "ip", "ratelimit.policies.api-key-failures.count-if",
					"#{#response.status == 401}", "ratelimit.policies.api-key-failures.count-if-mode",
					"check-then-charge", "ratelimit.policies.api-key-failures.limits[0].algorithm", "fixed-window",
					"ratelimit.policies.api-key-failures.limits[0].rate", "20/15m",
					"ratelimit.policies.tier-switch.key", "ip",
					"ratelimit.policies.tier-switch.tiers.anonymous[0].algorithm", "fixed-window",
					"ratelimit.policies.tier-switch.tiers.anonymous[0].rate", "5/1m",
					"ratelimit.policies.tier-switch.tiers.free[0].algorithm", "token-bucket",
					"ratelimit.policies.tier-switch.tiers.free[0].rate", "5/1m",
					"ratelimit.policies.tier-switch.tiers.paid[0].algorithm", "token-bucket",
					"ratelimit.policies.tier-switch.tiers.paid[0].rate", "5/1m", "ratelimit.filters[0].patterns",
					"/api/login", "ratelimit.filters[0].methods", "POST", "ratelimit.filters[0].policies",
					"login-failures-user,login-failures-ip", "ratelimit.filters[1].patterns", "/**",
					"ratelimit.filters[1].before-security", "true", "ratelimit.filters[1].when",
					"#{#request.getHeader('Authorization') != null}", "ratelimit.filters[1].policies",
					"basic-auth-failures", "ratelimit.filters[2].patterns", "/**",
					"ratelimit.filters[2].before-security", "true", "ratelimit.filters[2].when",
					"#{#request.getHeader('X-API-Key') != null}", "ratelimit.filters[2].policies", "api-key-failures",
					"ratelimit.filters[3].patterns", "/api/reverse", "ratelimit.filters[3].policies", "tier-switch")
			.start(processes);
	}

	private void wrongLoginsTogether(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f1.sample.wrong-logins-together";
		List<String> rounds = new ArrayList<>();
		long worstTries = -1;
		long worstRefused = -1;
		for (int round = 0; round < this.rounds; round++) {
			String username = "burst-" + round;
			String address = "198.51.100." + (10 + round);
			List<Integer> statuses = app.burst(TOGETHER,
					(i) -> HttpCall.post("/api/login", FORM, "username=" + username + "&password=wrong-" + i)
						.forwardedFor(address));
			long tries = AppIntegration.count(statuses, 401);
			long refused = AppIntegration.count(statuses, 429);
			rounds.add(tries + " tries, " + refused + " refused");
			if (tries > worstTries) {
				worstTries = tries;
				worstRefused = refused;
			}
		}
		recorder.add(version, row, "tries", worstTries, Target.exactly(5));
		recorder.add(version, row, "refused-429", worstRefused, Target.exactly(TOGETHER - 5));
		if (this.rounds > 1) {
			recorder.note("`" + row + "` " + version.label() + ", each round: " + String.join("; ", rounds) + ".");
		}
	}

	private void wrongBasicPasswordsTogether(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f5.sample.wrong-basic-together";
		WrongPasswords worst = null;
		List<String> rounds = new ArrayList<>();
		for (int round = 0; round < this.rounds; round++) {
			WrongPasswords burst = WrongPasswords.sendTogether(app, HttpCall.get(PATH), "198.51.100." + (30 + round),
					PASSWORD_MISMATCH);
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

	private static void unknownApiKeys(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f5.sample.unknown-api-keys";
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < UNKNOWN_KEYS; i++) {
			statuses
				.add(app.status(HttpCall.get(PATH).forwardedFor("198.51.100.50").header("X-API-Key", "guess-" + i)));
		}
		recorder.add(version, row, "answered-401", AppIntegration.count(statuses, 401), Target.exactly(20));
		recorder.add(version, row, "refused-429", AppIntegration.count(statuses, 429),
				Target.exactly(UNKNOWN_KEYS - 20));
	}

	private static void overridesOnTheApplicationPort(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f3.sample.overrides-post-app-port";
		HttpCall post = HttpCall.post("/actuator/ratelimitoverrides/api/ip:198.51.100.60", "application/json",
				"{\"limits\":[{\"rate\":\"1000/1m\"}]}");
		recorder.add(version, row, "operator-status", app.status(post.basic("operator", "change-me")),
				Target.exactly(404));
		recorder.add(version, row, "anonymous-status", app.status(post));
		recorder.add(version, row, "management-port-status",
				app.status(post.basic("operator", "change-me").toManagementPort()), Target.exactly(204));
	}

	private static void tierSwitch(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f8c.sample.tier-switch";
		HttpCall call = HttpCall.get(PATH).forwardedFor("198.51.100.70");
		long anonymous = 0;
		for (int i = 0; i < 6; i++) {
			anonymous += (app.status(call) == 200) ? 1 : 0;
		}
		long free = 0;
		for (int i = 0; i < 6; i++) {
			free += (app.status(call.header("X-API-Key", "demo-free")) == 200) ? 1 : 0;
		}
		recorder.add(version, row, "admitted-anonymous", anonymous, Target.exactly(5));
		recorder.add(version, row, "admitted-after-switch", free, Target.zero());
	}

	/**
	 * What wrong HTTP Basic passwords for the operator, sent together from one address,
	 * cost the application.
	 *
	 * @param checks the passwords its encoder checked and found wrong, by its log
	 * @param answered401 the 401s
	 * @param refused the 429s
	 * @param cpuMillis the CPU time its process used meanwhile
	 */
	record WrongPasswords(long checks, long answered401, long refused, long cpuMillis) {

		static WrongPasswords sendTogether(IntegrationApp app, HttpCall call, String address, String mismatchLine) {
			int mark = app.logLines().size();
			long cpu = app.cpuMillis();
			List<Integer> statuses = app.burst(TOGETHER,
					(i) -> call.forwardedFor(address).basic("operator", "guess-" + address + "-" + i));
			// every answer is in: the checks are done, their log lines written
			Pause.millis(300);
			return new WrongPasswords(app.logLinesContaining(mark, mismatchLine), AppIntegration.count(statuses, 401),
					AppIntegration.count(statuses, 429), app.cpuMillis() - cpu);
		}

		void record(Version version, String row, Recorder recorder, int limit) {
			recorder.add(version, row, "password-checks", this.checks, Target.exactly(limit));
			recorder.add(version, row, "answered-401", this.answered401, Target.exactly(limit));
			recorder.add(version, row, "refused-429", this.refused, Target.exactly(TOGETHER - limit));
			recorder.add(version, row, "app-cpu-ms", this.cpuMillis);
		}

	}

}
