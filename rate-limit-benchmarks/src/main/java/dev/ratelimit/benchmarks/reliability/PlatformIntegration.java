package dev.ratelimit.benchmarks.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.benchmarks.reliability.AppIntegration.Recorder;
import dev.ratelimit.benchmarks.reliability.AppIntegration.Version;

/**
 * Issue 32's finding 4: the applications started as on Kubernetes (the two variables
 * Spring Boot detects the platform by), where Boot turns Tomcat's {@code RemoteIpValve}
 * on. Whether each starts, what it logs, and how the sample keys a request that a proxy
 * on a private address forwards with a forged address in front of the real one.
 */
final class PlatformIntegration implements AppIntegration.Cases {

	private static final String REAL = "198.51.100.7";

	private static final int LIMIT = 3;

	private static final Pattern REMAINING = Pattern.compile("\"remaining\":(\\d+)");

	@Override
	public void describe(Recorder recorder) {
		recorder.note("`f4.*.kubernetes`: the application started with `KUBERNETES_SERVICE_HOST=10.0.0.1` and "
				+ "`KUBERNETES_SERVICE_PORT=443`, as on Kubernetes; `warn-lines` and `error-lines` count its log's "
				+ "lines at those levels until it answered or exited. The reactive example refuses to start "
				+ "there before and after, as documented (WebFlux has no valve that keeps the address it "
				+ "replaces): a control, without targets.");
		recorder.note("`f4.sample.kubernetes-forwarded-for`: on that instance, 6 `GET /api/reverse` from 127.0.0.1 "
				+ "(a proxy on a loopback address, which the valve trusts) with `X-Forwarded-For: 203.0.113.N, " + REAL
				+ "` (a new forged address in front of the real one each time), against a policy of " + LIMIT
				+ "/1m by address. `real-address-remaining`: what the `ratelimits` endpoint reads for `" + REAL
				+ "`; `forged-keys-charged`: how many of the forged addresses it reads as spent.");
	}

	@Override
	public void run(Version version, Processes processes, Recorder recorder) {
		String row = "f4.sample.kubernetes";
		try (IntegrationApp sample = version.sample("kubernetes")
			.environment("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			.environment("KUBERNETES_SERVICE_PORT", "443")
			.properties("ratelimit.policies.by-address.key", "ip", "ratelimit.policies.by-address.limits[0].algorithm",
					"fixed-window", "ratelimit.policies.by-address.limits[0].rate", LIMIT + "/1m",
					"ratelimit.filters[0].patterns", "/api/reverse", "ratelimit.filters[0].policies", "by-address")
			.start(processes)) {
			startUp(version, row, sample, recorder, true);
			forwardedFor(version, sample, recorder);
		}
		try (IntegrationApp reactive = version.reactive("kubernetes")
			.environment("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			.environment("KUBERNETES_SERVICE_PORT", "443")
			.start(processes)) {
			startUp(version, "f4.reactive.kubernetes", reactive, recorder, false);
		}
	}

	private static void startUp(Version version, String row, IntegrationApp app, Recorder recorder, boolean targeted) {
		recorder.add(version, row, "started", app.started() ? 1 : 0, targeted ? Target.exactly(1) : Target.NONE);
		recorder.add(version, row, "start-s", app.startSeconds());
		recorder.add(version, row, "warn-lines", app.warnLines(), targeted ? Target.exactly(1) : Target.NONE);
		recorder.add(version, row, "error-lines", app.errorLines(), targeted ? Target.zero() : Target.NONE);
		if (!app.started()) {
			recorder.note("`" + row + "` " + version.label() + ": exited with " + app.exitCode() + " after "
					+ Figures.format(app.startSeconds()) + " s: \"" + abbreviate(app.failureDescription()) + "\"");
		}
	}

	private static void forwardedFor(Version version, IntegrationApp app, Recorder recorder) {
		String row = "f4.sample.kubernetes-forwarded-for";
		if (!app.started()) {
			for (String measure : List.of("admitted-of-6", "real-address-remaining", "forged-keys-charged")) {
				recorder.text(version, row, measure, "no start");
			}
			return;
		}
		List<String> forged = new ArrayList<>();
		long admitted = 0;
		for (int i = 1; i <= 6; i++) {
			String address = "203.0.113." + (10 + i);
			forged.add(address);
			admitted += (app.status(HttpCall.get(SampleIntegration.PATH).forwardedFor(address + ", " + REAL)) == 200)
					? 1 : 0;
		}
		recorder.add(version, row, "admitted-of-6", admitted, Target.exactly(LIMIT));
		recorder.add(version, row, "real-address-remaining", remaining(app, REAL), Target.zero());
		long charged = forged.stream().filter((address) -> remaining(app, address) < LIMIT).count();
		recorder.add(version, row, "forged-keys-charged", charged, Target.zero());
	}

	/** What the {@code ratelimits} endpoint reads as left for an address. */
	private static long remaining(IntegrationApp app, String address) {
		IntegrationApp.Answer answer = app
			.send(HttpCall.get("/actuator/ratelimits/by-address/" + address).basic("operator", "change-me"));
		Matcher matcher = REMAINING.matcher(answer.body());
		if (answer.status() != 200 || !matcher.find()) {
			throw new IllegalStateException(
					"The ratelimits endpoint answered " + answer.status() + ": " + answer.body());
		}
		return Long.parseLong(matcher.group(1));
	}

	private static String abbreviate(String text) {
		return (text.length() <= 300) ? text : text.substring(0, 300) + "…";
	}

}
