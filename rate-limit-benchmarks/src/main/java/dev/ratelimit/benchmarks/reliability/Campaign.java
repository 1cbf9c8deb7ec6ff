package dev.ratelimit.benchmarks.reliability;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Runs one scenario of the campaign in this JVM:
 * {@code Campaign <scenario> <quick|full> <project root>}. Prints each figure as
 * {@code reliability <name> <value>} and appends it to the scenario's results file; exits
 * with 1 if the scenario failed (what it measured until then is kept).
 */
public final class Campaign {

	private Campaign() {
	}

	public static void main(String[] args) {
		if (args.length != 3 || !(args[1].equals("quick") || args[1].equals("full"))) {
			System.err.println("usage: Campaign <scenario> <quick|full> <project root>");
			System.exit(2);
		}
		// idle connections of the campaign's own HTTP client (metrics, endpoints) close
		// within seconds
		System.setProperty("jdk.httpclient.keepalive.timeout", "2");
		String name = args[0];
		Path root = Path.of(args[2]).toAbsolutePath();
		Settings settings = new Settings(root, args[1].equals("quick"),
				root.resolve("rate-limit-benchmarks/target/reliability"));
		Figures figures = new Figures(settings.results(), name);
		int status = 0;
		try (Processes processes = new Processes(settings.results().resolve("pids"),
				settings.results().resolve("logs").resolve(name))) {
			scenario(name).run(settings, processes, figures);
		}
		catch (Exception ex) {
			ex.printStackTrace();
			figures.note("did not complete: " + ex);
			status = 1;
		}
		// the HTTP client's threads would keep the JVM alive
		System.exit(status);
	}

	static Scenario scenario(String name) {
		return switch (name.toLowerCase(Locale.ROOT)) {
			case "saturation" -> new Saturation();
			case "restarts" -> new RedisRestarts();
			case "sentinel" -> new SentinelFailover();
			case "cluster" -> new ClusterFailover();
			case "slow-redis" -> new SlowRedis();
			case "key-flood" -> new KeyFlood();
			case "fuzz" -> new Fuzz();
			case "soak" -> new Soak();
			case "app-integration" -> new AppIntegration();
			default -> throw new IllegalArgumentException("Unknown scenario '" + name
					+ "'; expected saturation, restarts, sentinel, cluster, slow-redis, key-flood, fuzz, soak or "
					+ "app-integration");
		};
	}

}
