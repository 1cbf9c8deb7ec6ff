package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * Redis round trips per decision, one hot key, 64 threads making synchronous decisions
 * for a fixed time, per side: the commands the side's Lettuce client sent and the scripts
 * the server ran, each divided by the decisions made.
 */
public final class RedisRoundTrips {

	private static final int THREADS = 64;

	private RedisRoundTrips() {
	}

	/**
	 * Measures each side. Usage: {@code RedisRoundTrips SECONDS OUTPUT.json SIDE...},
	 * with {@code BENCH_REDIS_PORT} set.
	 * @param args the seconds per side, the result file and the sides
	 * @throws Exception if a measurement fails
	 */
	public static void main(String[] args) throws Exception {
		double seconds = Double.parseDouble(args[0]);
		List<String> lines = new ArrayList<>();
		RedisClient admin = RedisClient.create(RedisURI.create("127.0.0.1", RedisSides.port()));
		try (StatefulRedisConnection<String, String> connection = admin.connect()) {
			RedisCommands<String, String> redis = connection.sync();
			for (int i = 2; i < args.length; i++) {
				String name = args[i];
				try (RedisSides.Side side = RedisSides.of(name)) {
					run(side, 0.3);
					long sentBefore = side.commandsSent();
					redis.configResetstat();
					long decisions = run(side, seconds);
					long scripts = scripts(redis.info("commandstats"));
					long sent = side.commandsSent() - sentBefore;
					double perDecision = (double) sent / decisions;
					double scriptsPerDecision = (double) scripts / decisions;
					System.out.printf(Locale.ROOT,
							"round trips %s: %d decisions, %.4f commands sent and %.4f scripts run per decision%n",
							name, decisions, perDecision, scriptsPerDecision);
					lines.add(measurement("RedisRoundTrips." + name, perDecision, "commands sent/decision"));
					lines.add(measurement("RedisRoundTrips." + name + ".scripts", scriptsPerDecision,
							"scripts run/decision (INFO commandstats)"));
					lines.add(measurement("RedisRoundTrips." + name + ".decisions", decisions, "decisions counted"));
				}
			}
		}
		finally {
			admin.shutdown();
		}
		Files.writeString(java.nio.file.Path.of(args[1]),
				"{\"measurements\": [\n" + String.join(",\n", lines) + "\n]}\n");
	}

	private static String measurement(String name, double score, String unit) {
		return String.format(Locale.ROOT, "  {\"name\": \"%s\", \"score\": %.6f, \"unit\": \"%s\"}", name, score, unit);
	}

	private static long run(RedisSides.Side side, double seconds) throws InterruptedException {
		AtomicLong decisions = new AtomicLong();
		CountDownLatch done = new CountDownLatch(THREADS);
		long deadline = System.nanoTime() + (long) (seconds * 1e9);
		for (int t = 0; t < THREADS; t++) {
			Thread thread = new Thread(() -> {
				long made = 0;
				while (System.nanoTime() < deadline) {
					side.decide("client-0");
					made++;
				}
				decisions.addAndGet(made);
				done.countDown();
			});
			thread.setDaemon(true);
			thread.start();
		}
		done.await();
		return decisions.get();
	}

	// The calls of cmdstat_fcall, cmdstat_eval and cmdstat_evalsha in INFO commandstats,
	// after a CONFIG RESETSTAT.
	// Commands a script calls inside Redis are not round trips and are not counted.
	private static long scripts(String commandStats) throws IOException {
		long calls = 0;
		for (String line : commandStats.split("\r?\n")) {
			if (line.startsWith("cmdstat_fcall:") || line.startsWith("cmdstat_eval:")
					|| line.startsWith("cmdstat_evalsha:")) {
				int from = line.indexOf("calls=") + 6;
				calls += Long.parseLong(line.substring(from, line.indexOf(',', from)));
			}
		}
		return calls;
	}

}
