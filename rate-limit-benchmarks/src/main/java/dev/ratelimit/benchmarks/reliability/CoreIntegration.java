package dev.ratelimit.benchmarks.reliability;

import java.io.File;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.benchmarks.reliability.AppIntegration.Recorder;
import dev.ratelimit.benchmarks.reliability.AppIntegration.Version;
import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * Issue 32's findings 6 and 8b, which no HTTP request of the applications reaches: the
 * {@link CoreProbe} in a JVM of its own, with the version's {@code rate-limit-core} jar
 * ahead of the campaign's on the class path, against a Redis of the harness.
 */
final class CoreIntegration implements AppIntegration.Cases {

	private final int boundaries;

	CoreIntegration(Settings settings) {
		this.boundaries = settings.pick(3, 10);
	}

	@Override
	public void describe(Recorder recorder) {
		recorder.note("`f6.core.*` and `f8b.core.*`: not reachable over HTTP (a fill that Redis runs after a "
				+ "window's boundary needs Redis held at that instant; an unpaired surrogate cannot reach a key, since "
				+ "Tomcat and Netty read headers as ISO-8859-1 and malformed UTF-8 in a query as U+FFFD). A "
				+ "`RedisRateLimiter` in a JVM of its own (`CoreProbe`), with the version's `rate-limit-core` jar "
				+ "first on the class path, on a Redis of its own.");
		recorder.note("`f6.core.two-tier-boundary`: two-tier mode (`reservoir` 16) on a fixed window of 100/1s. In "
				+ "a window the instance takes 90 permits (Redis counts 96, its reservoir holds 6); 30 ms before the "
				+ "boundary Redis holds writes for 80 ms (`CLIENT PAUSE 80 WRITE`); 20 ms before it a call of cost "
				+ "10 sends a fill, which Redis runs after the boundary; then single permits until one is refused. "
				+ "`most-admitted-in-a-window`: the most the instance admitted in the new window, over "
				+ this.boundaries + " boundaries. Also `RedisReservoirBoundaryTest`, with the script's own clock.");
		recorder.note("`f8b.core.surrogate-keys`: one permit an hour for the client keys `\"bob\\uD800\"` (an "
				+ "unpaired surrogate) and `\"bob?\"`, which UTF-8 writes alike; `question-mark-key-allowed`: "
				+ "whether the second's first call is allowed; `redis-keys`: the states Redis holds for the two. "
				+ "Also `RedisRateLimiterTest.clientKeysThatUtf8WouldConfuseAreTwoClients` and `RedisKeysTest`.");
	}

	@Override
	public void run(Version version, Processes processes, Recorder recorder) {
		Map<String, Long> probe;
		try (RedisServer redis = processes.redis()) {
			String classPath = version.coreJar() + File.pathSeparator + System.getProperty("java.class.path");
			probe = parse(processes.run(List.of("java", "-Xmx128m", "-cp", classPath, CoreProbe.class.getName(),
					Integer.toString(redis.port()), Integer.toString(this.boundaries)), 120));
		}
		String boundary = "f6.core.two-tier-boundary";
		recorder.add(version, boundary, "boundaries-measured", value(probe, "boundaries-measured"), Target.atLeast(1));
		recorder.add(version, boundary, "most-admitted-in-a-window", value(probe, "most-admitted-in-a-window"),
				Target.atMost(100));
		String keys = "f8b.core.surrogate-keys";
		recorder.add(version, keys, "decided-by-redis", value(probe, "decided-by-redis"), Target.exactly(2));
		recorder.add(version, keys, "question-mark-key-allowed", value(probe, "question-mark-key-allowed"),
				Target.exactly(1));
		recorder.add(version, keys, "redis-keys", value(probe, "redis-keys"), Target.exactly(2));
	}

	private static Map<String, Long> parse(String output) {
		Map<String, Long> values = new LinkedHashMap<>();
		for (String line : output.split("\n")) {
			String[] fields = line.strip().split(" ");
			if (fields.length == 3 && fields[0].equals("probe")) {
				values.put(fields[1], Long.parseLong(fields[2]));
			}
		}
		return values;
	}

	private static long value(Map<String, Long> probe, String measure) {
		Long value = probe.get(measure);
		if (value == null) {
			throw new IllegalStateException("The core probe printed no " + measure + ": " + probe);
		}
		return value;
	}

}
