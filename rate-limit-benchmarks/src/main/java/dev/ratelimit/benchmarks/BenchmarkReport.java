package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.apache.commons.math3.distribution.TDistribution;

/**
 * Writes {@code docs/BENCHMARKS.md} from the result files of one run and prints one line
 * per ratio of issue 7, {@code ratio NAME VALUE} (ours divided by theirs; above 1 is
 * better, except for bytes).
 */
public final class BenchmarkReport {

	/**
	 * A measurement: a score with its error (99.9% confidence half-width for JMH) and
	 * unit.
	 */
	record Measurement(String name, double score, double error, String unit, double allocBytesPerOp) {
	}

	/**
	 * A ratio of issue 7 and its target; a ratio shown for context has no target
	 * ({@code NaN}), and says why.
	 */
	record Ratio(String name, String ours, String theirs, double target, boolean lowerIsBetter, String pendingReason,
			String context) {

		Ratio(String name, String ours, String theirs, double target, boolean lowerIsBetter, String pendingReason) {
			this(name, ours, theirs, target, lowerIsBetter, pendingReason, "");
		}

		/** A ratio shown for context only, without a target, for the reason given. */
		static Ratio context(String name, String ours, String theirs, String pendingReason, String why) {
			return new Ratio(name, ours, theirs, Double.NaN, false, pendingReason, why);
		}

		boolean hasTarget() {
			return !Double.isNaN(this.target);
		}

		boolean met(double value) {
			return this.lowerIsBetter ? value <= this.target : value >= this.target;
		}

		/**
		 * Whether the value meets the target, given the run's other measurements: round
		 * trips per decision in lease mode may exceed the target by the one lease still
		 * open when counting stopped (taken, its permits not all used), so they meet the
		 * target when the round trips are at most {@code ceil(decisions * target) + 1}.
		 */
		boolean met(double value, Map<String, Measurement> measurements) {
			Measurement decisions = measurements.get(this.ours + ".decisions");
			if (!this.name.equals(LEASE_RATIO) || decisions == null) {
				return met(value);
			}
			double roundTrips = value * decisions.score();
			return Math.round(roundTrips) <= Math.ceil(decisions.score() * this.target) + 1;
		}

		String targetText() {
			if (!hasTarget()) {
				return "none";
			}
			return (this.lowerIsBetter ? "≤ " : "≥ ") + format(this.target);
		}

	}

	private static final String REDIS_PENDING = "Redis benchmarks not in this run";

	private static final String LEASE_RATIO = "redis-lease-round-trips-vs-plain";

	private static final String HTTP_PENDING = "HTTP benchmarks not in this run";

	private static final String NETTY_PENDING = "HTTP benchmarks on Netty not in this run";

	private static final String PEERS_PENDING = "HTTP peers not in this run";

	static final List<Ratio> RATIOS = List.of(
			new Ratio("memory-1t-vs-bucket4j", "OneKeyOneThread.oursTryAcquire[path=allowed]",
					"OneKeyOneThread.bucket4j[path=allowed]", 1.2, false, ""),
			new Ratio("memory-2t-vs-bucket4j", "OneKeyTwoThreads.oursTryAcquire[path=allowed]",
					"OneKeyTwoThreads.bucket4j[path=allowed]", 1.5, false, ""),
			new Ratio("memory-1t-vs-resilience4j", "OneKeyOneThread.oursTryAcquire[path=allowed]",
					"OneKeyOneThread.resilience4j[path=allowed]", 1.0, false, ""),
			new Ratio("memory-1t-vs-guava", "OneKeyOneThread.oursTryAcquire[path=allowed]",
					"OneKeyOneThread.guava[path=allowed]", 1.0, false, ""),
			new Ratio("memory-1m-keys-vs-bucket4j", "ManyKeys.oursTryAcquire[keys=1000000,path=allowed]",
					"ManyKeys.bucket4j[keys=1000000,path=allowed]", 1.5, false, ""),
			new Ratio("bytes-per-key-vs-bucket4j", "RetainedHeap.ours", "RetainedHeap.bucket4j", 0.5, true, ""),
			new Ratio("redis-hot-64-vs-bucket4j", "RedisInFlight64.ours[keys=1]",
					"RedisInFlight64.bucket4jLettuce[keys=1]", 3.0, false, REDIS_PENDING),
			new Ratio("redis-hot-64-vs-scg", "RedisInFlight64.ours[keys=1]",
					"RedisInFlight64.springCloudGateway[keys=1]", 1.3, false, REDIS_PENDING),
			// Issue 23: the ceiling of ours is the trivial script through the same kind
			// of
			// Lettuce connection, on the same JMH threads, in the same run.
			new Ratio("redis-hot-64-vs-trivial-script", "RedisInFlight64.ours[keys=1]",
					"RedisInFlight64.trivialScript[keys=1]", 0.8, false, REDIS_PENDING),
			Ratio.context("redis-hot-64-vs-ceiling", "RedisInFlight64.ours[keys=1]", "RedisCeiling.evalsha",
					REDIS_PENDING,
					"`redis-benchmark` is a C client on 50 connections with no JVM beside it, measured at another time "
							+ "than ours: not a ceiling that a Java client on the same threads could reach, so no "
							+ "target; `redis-hot-64-vs-trivial-script` is the ceiling"),
			new Ratio("http-memory-vs-off", "Http.memory", "Http.off", 0.95, false, HTTP_PENDING),
			new Ratio("http-redis-vs-off", "Http.redis", "Http.off", 0.85, false, HTTP_PENDING),
			// Beyond the eleven names of the issue: its other Redis targets.
			new Ratio("redis-1t-vs-scg", "RedisOneThread.ours[keys=1]", "RedisOneThread.springCloudGateway[keys=1]",
					1.0, false, REDIS_PENDING),
			new Ratio("redis-round-trips-vs-scg", "RedisRoundTrips.ours", "RedisRoundTrips.springCloudGateway", 1.0,
					true, REDIS_PENDING),
			// a fill per N decisions, or per N - N/8 for a key whose 64 callers queue for
			// its fills, which is filled ahead (docs/REDIS.md, two-tier mode)
			new Ratio(LEASE_RATIO, "RedisRoundTrips.oursLease", "RedisRoundTrips.ours",
					1.0 / (RedisSides.LEASE - RedisSides.LEASE / 8), true, REDIS_PENDING),
			// Issue 22: the HTTP ratios again, for the reactive example on Netty, with
			// the
			// servlet side's targets.
			new Ratio("http-netty-memory-vs-off", "HttpNetty.memory", "HttpNetty.off", 0.95, false, NETTY_PENDING),
			new Ratio("http-netty-redis-vs-off", "HttpNetty.redis", "HttpNetty.off", 0.85, false, NETTY_PENDING),
			// Issue 23: the same endpoint limited by us and by our peers, in one run.
			new Ratio("http-memory-vs-resilience4j", "HttpPeers.memory", "HttpPeers.resilience4j", 1.0, false,
					PEERS_PENDING),
			new Ratio("http-memory-vs-bucket4j-starter", "HttpPeers.memory", "HttpPeers.bucket4j-memory", 1.0, false,
					PEERS_PENDING),
			new Ratio("http-redis-vs-bucket4j-starter", "HttpPeers.redis", "HttpPeers.bucket4j-redis", 1.5, false,
					PEERS_PENDING),
			new Ratio("http-redis-reservoir-vs-off", "HttpPeers.redis-reservoir", "HttpPeers.off", 0.9, false,
					PEERS_PENDING));

	/**
	 * The variants of the peers app, in table order, with what limits each one's
	 * requests.
	 */
	private static final Map<String, String> PEER_ROWS = new LinkedHashMap<>();

	static {
		PEER_ROWS.put("off", "no limiter");
		PEER_ROWS.put("memory", "**ours** in memory (its defaults: the rate-limit headers on)");
		PEER_ROWS.put("redis", "**ours** on Redis");
		PEER_ROWS.put("redis-reservoir", "**ours** on Redis, two-tier mode (`ratelimit.redis.reservoir: 100`)");
		PEER_ROWS.put("resilience4j", "Resilience4j `RateLimiter` per API key from the registry of "
				+ "`resilience4j-spring-boot4`, asked by a `HandlerInterceptor`");
		PEER_ROWS.put("bucket4j-memory", "`bucket4j-spring-boot-starter`'s servlet filter, Caffeine JCache");
		PEER_ROWS.put("bucket4j-redis", "`bucket4j-spring-boot-starter`'s servlet filter, Redis through Jedis");
	}

	/**
	 * The competitors of the one-key benchmarks, in table order, with what each call
	 * does.
	 */
	private static final Map<String, String> ONE_KEY_ROWS = new LinkedHashMap<>();

	static {
		ONE_KEY_ROWS.put("oursTryAcquire", "**ours**: `InMemoryRateLimiter.tryAcquire(keyedLimit, 1)`, lookup in its "
				+ "bounded store, returns a boolean");
		ONE_KEY_ROWS.put("ours", "**ours**: `InMemoryRateLimiter.acquire(keyedLimit)`, lookup in its bounded store, "
				+ "returns a full `Decision`");
		ONE_KEY_ROWS.put("bucket4j", "Bucket4j default (lock-free) bucket: `map.get(key).tryConsume(1)`");
		ONE_KEY_ROWS.put("bucket4jSynchronized", "Bucket4j synchronized bucket: `map.get(key).tryConsume(1)`");
		ONE_KEY_ROWS.put("resilience4j", "Resilience4j `AtomicRateLimiter`: `map.get(key).acquirePermission()`");
		ONE_KEY_ROWS.put("guava", "Guava `RateLimiter`: `map.get(key).tryAcquire()`");
		ONE_KEY_ROWS.put("bucket4jDirect",
				"Bucket4j default bucket without lookup: `bucket.tryConsume(1)` " + "(reference only)");
	}

	private static final Map<String, String> MANY_KEYS_ROWS = new LinkedHashMap<>();

	static {
		MANY_KEYS_ROWS.put("oursTryAcquire", "**ours**: `tryAcquire(new KeyedLimit(policy, key, limit), 1)` → boolean");
		MANY_KEYS_ROWS.put("ours", "**ours**: `acquire(new KeyedLimit(policy, key, limit))` → `Decision`");
		MANY_KEYS_ROWS.put("bucket4j", "Bucket4j: `map.computeIfAbsent(key, newBucket).tryConsume(1)`");
	}

	private BenchmarkReport() {
	}

	/*
	 * Every *.json file of the results folder is read: JMH result files (a JSON array),
	 * and the files of the measurements that JMH does not make (an object with a
	 * measurements array of name, score, error, unit). A JMH measurement is named
	 * Class.method[param=value,...]. A ratio whose measurements are missing is reported
	 * as pending, so a section (Redis, HTTP) joins the report as soon as its results
	 * appear under the names in RATIOS.
	 */

	/**
	 * Writes the report. Usage:
	 * {@code BenchmarkReport RESULTS_DIR OUTPUT.md MODE COMMIT [NOTES.md]}.
	 * @param args the results folder, the report file, the mode, the commit and
	 * optionally a notes file
	 * @throws IOException if a file cannot be read or written
	 */
	public static void main(String[] args) throws IOException {
		if (args.length < 4) {
			System.err.println("usage: BenchmarkReport RESULTS_DIR OUTPUT.md MODE COMMIT [NOTES.md]");
			System.exit(2);
		}
		Path results = Path.of(args[0]);
		Map<String, Measurement> measurements = new TreeMap<>();
		Map<String, Object> environment = new LinkedHashMap<>();
		Map<String, List<List<Double>>> raw = new TreeMap<>();
		Map<String, String> blocked = new TreeMap<>();
		try (Stream<Path> files = Files.list(results)) {
			for (Path file : files.filter((f) -> f.toString().endsWith(".json")).sorted().toList()) {
				read(Json.parse(Files.readString(file)), measurements, raw, environment, blocked);
			}
		}
		Path notes = (args.length > 4) ? Path.of(args[4]) : null;
		String report = new BenchmarkReport().render(measurements, environment, blocked, args[2], args[3], results,
				notes);
		Files.writeString(Path.of(args[1]), report);
		for (Ratio ratio : RATIOS) {
			Double value = value(ratio, measurements);
			if (value != null) {
				System.out.println("ratio " + ratio.name() + " " + format(value));
			}
			else {
				System.out.println("# ratio " + ratio.name() + " skipped: " + skippedReason(ratio, blocked));
			}
		}
	}

	@SuppressWarnings("unchecked")
	private static void read(Object json, Map<String, Measurement> into, Map<String, List<List<Double>>> raw,
			Map<String, Object> environment, Map<String, String> blocked) {
		if (json instanceof List<?> jmh) {
			for (Object entry : jmh) {
				Map<String, Object> result = (Map<String, Object>) entry;
				String benchmark = (String) result.get("benchmark");
				String simple = benchmark.substring(benchmark.lastIndexOf('.', benchmark.lastIndexOf('.') - 1) + 1);
				Map<String, Object> params = (Map<String, Object>) result.getOrDefault("params", Map.of());
				StringBuilder name = new StringBuilder(simple);
				if (!params.isEmpty()) {
					StringBuilder list = new StringBuilder();
					new TreeMap<>(params)
						.forEach((k, v) -> list.append(list.length() > 0 ? "," : "").append(k).append('=').append(v));
					name.append('[').append(list).append(']');
				}
				Map<String, Object> primary = (Map<String, Object>) result.get("primaryMetric");
				Map<String, Object> secondary = (Map<String, Object>) result.getOrDefault("secondaryMetrics", Map.of());
				Object alloc = secondary.get("gc.alloc.rate.norm");
				double allocPerOp = (alloc != null) ? Json.number(((Map<String, Object>) alloc).get("score"))
						: Double.NaN;
				Measurement measurement = new Measurement(name.toString(), Json.number(primary.get("score")),
						Json.number(primary.get("scoreError")), (String) primary.get("scoreUnit"), allocPerOp);
				List<List<Double>> passes = raw.computeIfAbsent(measurement.name(), (k) -> new ArrayList<>());
				List<Double> iterations = iterations(primary.get("rawData"));
				if (!passes.isEmpty() && !iterations.isEmpty()) {
					// Another pass of the same benchmark (run.sh runs the in-memory
					// classes in several passes, so that
					// the machine's drift falls on every benchmark alike): pool the
					// iterations of all passes.
					Measurement earlier = into.get(measurement.name());
					measurement = pooled(measurement, passes, iterations, earlier.allocBytesPerOp());
				}
				passes.add(iterations);
				into.put(measurement.name(), measurement);
				environment.merge("passes", passes.size(), (a, b) -> Math.max((Integer) a, (Integer) b));
				environment.putIfAbsent("jdk",
						result.get("jdkVersion") + " (" + result.get("vmName") + " " + result.get("vmVersion") + ")");
				environment.putIfAbsent("warmup",
						whole(result.get("warmupIterations")) + " × " + result.get("warmupTime"));
				environment.putIfAbsent("measurement",
						whole(result.get("measurementIterations")) + " × " + result.get("measurementTime"));
				environment.putIfAbsent("forks", whole(result.get("forks")));
				environment.merge("jvmArgs", String.valueOf(result.get("jvmArgs")),
						(a, b) -> a.toString().contains(b.toString()) ? a : a + ", " + b);
			}
		}
		else if (json instanceof Map<?, ?> object && object.get("measurements") instanceof List<?> list) {
			for (Object entry : list) {
				Map<String, Object> m = (Map<String, Object>) entry;
				String name = (String) m.get("name");
				// a side that could not be measured (a peer that does not start), and why
				if (m.get("blocked") instanceof String why) {
					blocked.put(name, why);
					continue;
				}
				into.put(name, new Measurement(name, Json.number(m.get("score")), Json.number(m.get("error")),
						(String) m.get("unit"), Double.NaN));
			}
			if (object.get("versions") instanceof Map<?, ?> versions) {
				versions.forEach((library, version) -> environment.put("version:" + library, version));
			}
		}
	}

	/**
	 * The iteration scores of every fork, from JMH's {@code rawData} (a list per fork).
	 */
	private static List<Double> iterations(Object rawData) {
		List<Double> iterations = new ArrayList<>();
		if (rawData instanceof List<?> forks) {
			for (Object fork : forks) {
				if (fork instanceof List<?> scores) {
					for (Object score : scores) {
						iterations.add(Json.number(score));
					}
				}
			}
		}
		return iterations;
	}

	/**
	 * A measurement pooled from the iterations of earlier passes and of {@code latest}:
	 * their mean, and the half-width of its 99.9% confidence interval (Student's t, as
	 * JMH computes its error).
	 */
	private static Measurement pooled(Measurement latest, List<List<Double>> passes, List<Double> iterations,
			double earlierAlloc) {
		List<Double> all = new ArrayList<>();
		passes.forEach(all::addAll);
		all.addAll(iterations);
		int n = all.size();
		double mean = all.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
		double squares = all.stream().mapToDouble((x) -> (x - mean) * (x - mean)).sum();
		double error = (n > 1) ? new TDistribution(n - 1).inverseCumulativeProbability(1 - 0.001 / 2)
				* Math.sqrt(squares / (n - 1)) / Math.sqrt(n) : Double.NaN;
		double alloc = Double.isNaN(earlierAlloc) ? latest.allocBytesPerOp()
				: (earlierAlloc * passes.size() + latest.allocBytesPerOp()) / (passes.size() + 1);
		return new Measurement(latest.name(), mean, error, latest.unit(), alloc);
	}

	private static Double value(Ratio ratio, Map<String, Measurement> measurements) {
		Measurement ours = measurements.get(ratio.ours());
		Measurement theirs = measurements.get(ratio.theirs());
		if (ours == null || theirs == null || theirs.score() == 0) {
			return null;
		}
		return ours.score() / theirs.score();
	}

	/**
	 * The lowest and highest ratio the two scores' errors allow, or {@code null} if
	 * either error is unknown. When the denominator's error reaches zero, the highest is
	 * infinite: the run cannot bound the ratio from above.
	 */
	private static double[] range(Measurement ours, Measurement theirs) {
		if (Double.isNaN(ours.error()) || Double.isNaN(theirs.error())) {
			return null;
		}
		double low = Math.max(0, ours.score() - ours.error()) / (theirs.score() + theirs.error());
		double high = (theirs.score() - theirs.error() <= 0) ? Double.POSITIVE_INFINITY
				: (ours.score() + ours.error()) / (theirs.score() - theirs.error());
		return new double[] { low, high };
	}

	private static String pendingReason(Ratio ratio) {
		return ratio.pendingReason().isEmpty() ? "no result for " + ratio.ours() + " or " + ratio.theirs()
				: ratio.pendingReason();
	}

	/**
	 * Why a ratio without a value has none: {@code blocked: SIDE: WHY} when a side of it
	 * could not run in this run, else {@code pending: WHY}.
	 */
	private static String missingReason(Ratio ratio, Map<String, String> blocked) {
		for (String side : List.of(ratio.ours(), ratio.theirs())) {
			if (blocked.containsKey(side)) {
				return "blocked: " + side + ": " + blocked.get(side);
			}
		}
		return "pending: " + pendingReason(ratio);
	}

	private static String skippedReason(Ratio ratio, Map<String, String> blocked) {
		String reason = missingReason(ratio, blocked);
		return reason.startsWith("blocked: ") ? reason : pendingReason(ratio);
	}

	private String render(Map<String, Measurement> m, Map<String, Object> environment, Map<String, String> blocked,
			String mode, String commit, Path results, Path notes) throws IOException {
		StringBuilder out = new StringBuilder();
		out.append("# Benchmarks\n\n");
		out.append("Generated by `rate-limit-benchmarks/run.sh")
			.append("quick".equals(mode) ? " --quick" : "")
			.append("` from commit `")
			.append(commit)
			.append("`. Every number below comes from one run on one machine; ")
			.append("the machines are shared and noisy, so compare the **ratios** (ours ÷ theirs, measured side by side ")
			.append("in the same run), not the absolute numbers. ")
			.append("quick".equals(mode) ? "**This is a quick run** (short warm-up): peers' numbers may be too low; "
					+ "use the full run for claims. " : "")
			.append("The raw JMH JSON is in [`docs/benchmarks/`](benchmarks/).\n\n");

		out.append("## Ratios and targets (issue 7)\n\n");
		out.append("*Range*: the ratio's extremes given both scores' errors (JMH's 99.9% confidence half-widths); ")
			.append("a missed target whose range reaches it is marked *within the error*: this run cannot tell.\n\n");
		out.append("| ratio | value | range | target | |\n|---|---:|---:|---:|---|\n");
		for (Ratio ratio : RATIOS) {
			Double value = value(ratio, m);
			out.append("| `").append(ratio.name()).append("` | ");
			if (value == null) {
				out.append("— | | ")
					.append(ratio.targetText())
					.append(" | ")
					.append(missingReason(ratio, blocked))
					.append(" |\n");
			}
			else if (!ratio.hasTarget()) {
				double[] range = range(m.get(ratio.ours()), m.get(ratio.theirs()));
				out.append(format(value))
					.append(" | ")
					.append((range != null) ? format(range[0]) + " – " + format(range[1]) : "")
					.append(" | none | context only: ")
					.append(ratio.context())
					.append(" |\n");
			}
			else {
				double[] range = range(m.get(ratio.ours()), m.get(ratio.theirs()));
				boolean reachable = range != null
						&& (ratio.lowerIsBetter() ? range[0] <= ratio.target() : range[1] >= ratio.target());
				out.append(format(value))
					.append(" | ")
					.append((range != null) ? format(range[0]) + " – " + format(range[1]) : "")
					.append(" | ")
					.append(ratio.targetText())
					.append(" | ")
					.append(ratio.met(value, m) ? "met" : reachable ? "**missed**, within the error" : "**missed**")
					.append(" |\n");
			}
		}
		bestOfOthers(out, m, "OneKeyOneThread", "1 thread");
		bestOfOthers(out, m, "OneKeyTwoThreads", "2 threads");
		out.append('\n');

		out.append("## In memory, one key\n\n");
		out.append(
				"One hot key that every thread calls. *Allowed*: a billion permits per second, so every call passes. ")
			.append("*Rejected*: 1000 per second, so all but a few calls per million are turned away. ")
			.append("The same work on every side: each call finds the key's limiter by its key, decides, and answers. ")
			.append("Each competitor's limiter is looked up by the same key in a `ConcurrentHashMap` and answers a ")
			.append("boolean; ours looks the key up in its own bounded store (a `ConcurrentHashMap` with idle expiry) and answers ")
			.append("a boolean with `tryAcquire`, the same answer, which the ratios use, or a full `Decision` ")
			.append("(remaining, retry-after, reset-after: what the HTTP headers need) with `acquire`. ")
			.append("Bucket4j without the lookup is shown for reference.\n\n");
		oneKeyTable(out, m, "OneKeyOneThread", "1 thread");
		oneKeyTable(out, m, "OneKeyTwoThreads", "2 threads on the same key");

		out.append("## In memory, 1,000,000 keys\n\n");
		out.append("Each call picks one of a million clients at random (per-thread xorshift); both stores hold every ")
			.append("client before measuring. *Allowed*: 1000 per minute per key (the paid tier), each key called about ")
			.append("once a second. ")
			.append("*Rejected*: 1 per hour per key, taken before measuring. ")
			.append("The ratio uses ours answering the same boolean as Bucket4j (`tryAcquire`); `acquire`, which also ")
			.append("builds a `Decision`, is shown beside it.\n\n");
		table(out, m, "ManyKeys", "[keys=1000000,path=%s]", MANY_KEYS_ROWS, List.of("oursTryAcquire", "ours"),
				"1 thread");

		out.append("## Retained heap per key\n\n");
		out.append("A separate JVM per library fills 1,000,000 distinct keys (token bucket 60/1m, one call each), ")
			.append("then measures the used heap after full GCs against the same measurement before filling. The key ")
			.append("strings exist before and after, so neither side is charged for them; ours is charged for the ")
			.append("`KeyedLimit` its store keeps as the map key. Bucket4j is measured with each bucket built as its ")
			.append("documentation shows (`Bucket.builder().addLimit(limit -> limit.capacity(60).refillGreedy(60, ")
			.append("ofMinutes(1)))`, which the ratio uses) and, frugally, with one `Bandwidth` shared by all ")
			.append("buckets.\n\n");
		out.append("| library | bytes per key | ours ÷ this |\n|---|---:|---:|\n");
		Measurement oursBytes = m.get("RetainedHeap.ours");
		for (String library : List.of("ours", "bucket4j", "bucket4jSharedBandwidth")) {
			Measurement bytes = m.get("RetainedHeap." + library);
			out.append("| ")
				.append(library)
				.append(" | ")
				.append((bytes != null) ? format(bytes.score()) : "—")
				.append(" | ");
			if (bytes != null && oursBytes != null && !"ours".equals(library)) {
				out.append(format(oursBytes.score() / bytes.score()));
			}
			out.append(" |\n");
		}
		out.append('\n');

		out.append("## Redis\n\n");
		out.append("Against a `redis-server` that `run.sh` starts on a free port (no persistence). Every call is a ")
			.append("synchronous decision for one permit that returns once Redis has answered; every side gets one ")
			.append("multiplexed Lettuce connection, the same token bucket of 10⁹/s with a one-second burst (so ")
			.append("every call is allowed) and the same JMH threads: *64 in flight* is 64 threads, *one thread* ")
			.append("is one. *keys=1*: one hot key; *keys=100000*: a key at random per call. Ours is ")
			.append("`RedisRateLimiter.acquire(keyedLimit)` (token bucket, sliding window counter, and the token ")
			.append("bucket in lease mode with 100 permits per round trip); Bucket4j is its Lettuce compare-and-swap ")
			.append("proxy manager, `proxy.tryConsume(1)`; Spring Cloud Gateway is its `RedisRateLimiter` used as a ")
			.append("library (`isAllowed(route, key).block()`, its own script from its jar). The *ceiling of ours* ")
			.append("(`RedisInFlight64.trivialScript`) is no limiter: EVALSHA of the script `return 1` on a connection ")
			.append("of the factory's Lettuce client, opened and waited for as ours opens and waits for its own, on the ")
			.append("same 64 JMH threads in the same run; `redis-hot-64-vs-trivial-script` is ours ÷ it. ")
			.append("`redis-benchmark`'s figures (a C client, 50 connections, measured before the JMH run) are context ")
			.append("only.\n\n");
		redisTable(out, m);
		cpuTable(out, m);
		section(out, m, "### Redis round trips per decision", "RedisRoundTrips.", REDIS_PENDING);
		section(out, m, "### Redis ceiling (`redis-benchmark`, 50 connections, no pipelining)", "RedisCeiling.",
				REDIS_PENDING);
		out.append("## HTTP\n\n");
		out.append("The sample app (`/api/reverse?lat=34&lon=-6`, `X-API-Key: demo-paid`, limits raised so that ")
			.append("every request is allowed), three instances started together: limiter off ")
			.append("(`ratelimit.enabled=false`), on in memory, on with Redis (the same server as above). Each is ")
			.append("warmed up with `wrk` at one connection (the JIT compilers need a free core: under full load an ")
			.append("instance takes minutes to reach its steady state on this machine), then briefly at full load; ")
			.append("then the three are measured in turn with 32 connections (1 `wrk` thread), round after round in ")
			.append("a rotating order, so that the machine's drifting load falls on all three alike. A full run ")
			.append("does this twice, with fresh instances each time (two instances of the same jar differed by up ")
			.append("to 8% here, after their JIT's decisions), and pools the rounds. Requests/s is ")
			.append("the mean of the rounds (error: half the spread of the rounds), p99 the median of the rounds' ")
			.append("p99. `cpuPerRequest` is the instance's CPU time (user + system, all its threads: request ")
			.append("threads, Lettuce, GC and JIT) over the measured rounds divided by their requests, which the ")
			.append("machine's other load disturbs less than requests/s; `Http.redis.serverCpuPerRequest` is ")
			.append("`redis-server`'s. `Http.redis.backendFailures` counts the Redis calls of the measured rounds ")
			.append("that failed (timed out) and were decided by the local fallback instead.\n\n");
		section(out, m, "", "Http.", HTTP_PENDING
				+ ": the sample app's throughput and p99 under a fixed load, limiter on (memory, Redis) vs off.");

		out.append("## HTTP on Netty\n\n");
		out.append("The same three ways, load and timing as above, for the reactive example (`reactive-example-app`: ")
			.append("WebFlux on Netty, `/api/quote?symbol=ACME`, a `Mono` handler, `X-API-Key: demo-paid`, its two ")
			.append("policies raised so that every request is allowed): limiter off (`ratelimit.enabled=false`), on in ")
			.append("memory (decided on the event loop by the `WebFilter`), on with Redis (the same server). The ")
			.append("measurements are named as the servlet side's, under `HttpNetty.`.\n\n");
		section(out, m, "", "HttpNetty.", NETTY_PENDING
				+ ": the reactive example's throughput and p99 under a fixed load, limiter on (memory, Redis) vs off.");

		peersSection(out, m, blocked);

		out.append("## Machine and versions\n\n");
		out.append("| | |\n|---|---|\n");
		out.append("| cores (`nproc`) | ").append(Runtime.getRuntime().availableProcessors()).append(" |\n");
		out.append("| CPU | ").append(cpuModel()).append(" |\n");
		out.append("| memory | ").append(memTotal()).append(" |\n");
		out.append("| OS | ")
			.append(System.getProperty("os.name"))
			.append(' ')
			.append(System.getProperty("os.version"))
			.append(" |\n");
		out.append("| JDK | ")
			.append(environment.getOrDefault("jdk", System.getProperty("java.vm.version")))
			.append(" |\n");
		out.append("| JMH | warm-up ")
			.append(environment.getOrDefault("warmup", "?"))
			.append(", measurement ")
			.append(environment.getOrDefault("measurement", "?"))
			.append(", forks ")
			.append(environment.getOrDefault("forks", "?"))
			.append(((Integer) environment.getOrDefault("passes", 1) > 1) ? " per pass, " + environment.get("passes")
					+ " passes of the in-memory classes and of the one-thread Redis hot-key pair (pooled)" : "")
			.append(", JVM args (per class) `")
			.append(environment.getOrDefault("jvmArgs", "?"))
			.append("` |\n");
		Properties versions = new Properties();
		try (InputStream in = BenchmarkReport.class.getResourceAsStream("/benchmark-versions.properties")) {
			if (in != null) {
				versions.load(in);
			}
		}
		for (String name : List.of("rate-limit", "caffeine", "bucket4j", "resilience4j", "guava",
				"spring-cloud-gateway", "lettuce", "jmh")) {
			out.append("| ").append(name).append(" | ").append(versions.getProperty(name, "?")).append(" |\n");
		}
		// the peers app's libraries, as its jar holds them (run.sh reads them there)
		environment.forEach((key, version) -> {
			if (key.startsWith("version:")) {
				out.append("| ")
					.append(key.substring("version:".length()))
					.append(" (peers app) | ")
					.append(version)
					.append(" |\n");
			}
		});
		out.append('\n');

		if (notes != null && Files.exists(notes)) {
			out.append("## Notes\n\n").append(Files.readString(notes).strip()).append("\n\n");
		}

		out.append("## Reproduce\n\n");
		out.append(
				"```\nrate-limit-benchmarks/run.sh          # full: 10 × 1 s warm-up, 5 × 1 s measurement, 2 forks (in memory, 2 passes of 1)\n")
			.append("rate-limit-benchmarks/run.sh --quick  # under 6 minutes, for checking, not for claims\n```\n\n")
			.append("Result files: ");
		try (Stream<Path> files = Files.list(results)) {
			out.append(String.join(", ", files.map((f) -> "`" + f.getFileName() + "`").sorted().toList()));
		}
		out.append(".\n");
		return out.toString();
	}

	private static void peersSection(StringBuilder out, Map<String, Measurement> m, Map<String, String> blocked) {
		out.append("## HTTP peers (issue 23)\n\n");
		out.append("The same endpoint limited by us and by our peers, measured side by side: the peers app ")
			.append("(`peers-benchmark-app`: Spring MVC on Tomcat, one endpoint, `GET /api/hello`, a small JSON body), ")
			.append("limited per API key (`X-API-Key`) in the key's tier (free 60/min, paid 1000/min, each read by ")
			.append("every variant from `peers.tiers`), one instance per variant, each its Spring profile of the same ")
			.append("jar. `wrk` sends `X-API-Key: demo-paid`, whose tier is raised to 10⁸ per second for every variant, ")
			.append("so every request runs the limiter's allowed path. The load, warm-up and rotation are the HTTP ")
			.append("section's, with fewer and shorter rounds (seven instances instead of three; see `run.sh`). Only ")
			.append("the variant's limiter acts: the others are switched off by property or profile. Resilience4j ")
			.append("limits per refresh cycle (`limitForPeriod` per `limitRefreshPeriod`), the others with a token ")
			.append("bucket. Bucket4j's starter takes only a synchronous proxy manager in its servlet filter, so it ")
			.append("reaches Redis through Jedis (a pool of 32 connections, as many as `wrk` opens); ours through its ")
			.append("Lettuce connection, with its defaults (a failed Redis call is allowed). Our Redis variants count ")
			.append("their failed Redis calls through a `RateLimitListener`, which costs ours an event per request. ")
			.append("CPU per request is the instance's (all its threads) and, for the Redis variants, ")
			.append("`redis-server`'s, over the measured rounds.\n\n");
		boolean any = PEER_ROWS.keySet()
			.stream()
			.anyMatch(
					(variant) -> m.containsKey("HttpPeers." + variant) || blocked.containsKey("HttpPeers." + variant));
		if (!any) {
			out.append("Pending. ").append(PEERS_PENDING).append(".\n\n");
			return;
		}
		Measurement off = m.get("HttpPeers.off");
		out.append("| variant | limited by | requests/s | ÷ off | p99 ms | non-2xx | CPU per request, app µs | ")
			.append("CPU per request, redis-server µs | failed Redis calls |\n")
			.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
		for (Map.Entry<String, String> row : PEER_ROWS.entrySet()) {
			String name = "HttpPeers." + row.getKey();
			out.append("| `").append(row.getKey()).append("` | ").append(row.getValue()).append(" | ");
			Measurement rps = m.get(name);
			if (rps == null) {
				out.append(blocked.containsKey(name) ? "blocked: " + blocked.get(name) : "—")
					.append(" | | | | | | |\n");
				continue;
			}
			out.append(opsPerSecond(rps))
				.append(" | ")
				.append((off != null && off.score() != 0) ? format(rps.score() / off.score()) : "")
				.append(" | ")
				.append(cell(m.get(name + ".p99"), "%.2f"))
				.append(" | ")
				.append(cell(m.get(name + ".non2xx"), "%.0f"))
				.append(" | ")
				.append(cell(m.get(name + ".cpuPerRequest"), "%.1f"))
				.append(" | ")
				.append(cell(m.get(name + ".serverCpuPerRequest"), "%.1f"))
				.append(" | ")
				.append(cell(m.get(name + ".backendFailures"), "%.0f"))
				.append(" |\n");
		}
		out.append('\n');
	}

	private static String cell(Measurement measurement, String format) {
		return (measurement != null) ? String.format(Locale.ROOT, format, measurement.score()) : "";
	}

	private static void bestOfOthers(StringBuilder out, Map<String, Measurement> m, String benchmark, String label) {
		Measurement ours = m.get(benchmark + ".oursTryAcquire[path=allowed]");
		Measurement best = null;
		for (String other : List.of("bucket4jSynchronized", "resilience4j", "guava")) {
			Measurement candidate = m.get(benchmark + "." + other + "[path=allowed]");
			if (candidate != null && (best == null || candidate.score() > best.score())) {
				best = candidate;
			}
		}
		if (ours != null && best != null) {
			double value = ours.score() / best.score();
			double[] range = range(ours, best);
			out.append("| ")
				.append(label)
				.append(", vs the best of Bucket4j synchronized, Resilience4j and Guava (")
				.append(best.name().substring(benchmark.length() + 1, best.name().indexOf('[')))
				.append(") | ")
				.append(format(value))
				.append(" | ")
				.append((range != null) ? format(range[0]) + " – " + format(range[1]) : "")
				.append(" | ≥ 1 | ")
				.append(value >= 1 ? "met"
						: (range != null && range[1] >= 1) ? "**missed**, within the error" : "**missed**")
				.append(" |\n");
		}
	}

	private static void oneKeyTable(StringBuilder out, Map<String, Measurement> m, String benchmark, String label) {
		table(out, m, benchmark, "[path=%s]", ONE_KEY_ROWS, List.of("oursTryAcquire", "ours"), label);
	}

	private static void table(StringBuilder out, Map<String, Measurement> m, String benchmark, String params,
			Map<String, String> rows, List<String> ours, String label) {
		out.append("### ").append(label).append("\n\n");
		StringBuilder header = new StringBuilder("| library, call");
		StringBuilder rule = new StringBuilder("|---");
		for (String path : List.of("allowed", "rejected")) {
			header.append(" | ").append(path).append(" ops/s");
			rule.append("|---:");
			for (String mine : ours) {
				header.append(" | ").append(ours.size() > 1 ? "`" + mine + "`" : "ours").append(" ÷ this");
				rule.append("|---:");
			}
		}
		out.append(header).append(" | allocated B/op (allowed) |\n").append(rule).append("|---:|\n");
		for (Map.Entry<String, String> row : rows.entrySet()) {
			out.append("| ").append(row.getValue());
			for (String path : List.of("allowed", "rejected")) {
				String suffix = String.format(params, path);
				Measurement theirs = m.get(benchmark + "." + row.getKey() + suffix);
				out.append(" | ").append((theirs != null) ? opsPerSecond(theirs) : "—");
				for (String name : ours) {
					Measurement mine = m.get(benchmark + "." + name + suffix);
					out.append(" | ");
					if (theirs != null && mine != null && !ours.contains(row.getKey())) {
						out.append(format(mine.score() / theirs.score()));
					}
				}
			}
			Measurement allowed = m.get(benchmark + "." + row.getKey() + String.format(params, "allowed"));
			out.append(" | ")
				.append((allowed != null && !Double.isNaN(allowed.allocBytesPerOp()))
						? String.format(Locale.ROOT, "%.0f", allowed.allocBytesPerOp()) : "—")
				.append(" |\n");
		}
		out.append('\n');
	}

	private static void redisTable(StringBuilder out, Map<String, Measurement> m) {
		List<String> sides = List.of("ours", "oursSlidingWindow", "oursLease", "bucket4jLettuce", "springCloudGateway");
		List<String> columns = List.of("RedisInFlight64.%s[keys=1]", "RedisInFlight64.%s[keys=100000]",
				"RedisOneThread.%s[keys=1]", "RedisOneThread.%s[keys=100000]");
		out.append("| side | 64 in flight, 1 key | 64 in flight, 100,000 keys | 1 thread, 1 key | 1 thread, ")
			.append("100,000 keys | round trips per decision (64 threads, 1 key) |\n|---|---:|---:|---:|---:|---:|\n");
		for (String side : sides) {
			out.append("| ").append(side);
			for (String column : columns) {
				Measurement found = m.get(String.format(column, side));
				out.append(" | ").append((found != null) ? opsPerSecond(found) : "—");
			}
			Measurement trips = m.get("RedisRoundTrips." + side);
			out.append(" | ")
				.append((trips != null) ? String.format(Locale.ROOT, "%.3f", trips.score()) : "—")
				.append(" |\n");
		}
		Measurement trivial = m.get("RedisInFlight64.trivialScript[keys=1]");
		Measurement trivialMany = m.get("RedisInFlight64.trivialScript[keys=100000]");
		out.append(
				"| *ceiling of ours*: EVALSHA of `return 1` through the same kind of Lettuce connection, same threads | ")
			.append((trivial != null) ? opsPerSecond(trivial) : "—")
			.append(" | ")
			.append((trivialMany != null) ? opsPerSecond(trivialMany) : "—")
			.append(" | | | 1 |\n");
		Measurement ceiling = m.get("RedisCeiling.evalsha");
		Measurement ping = m.get("RedisCeiling.ping");
		out.append("| *context*: `redis-benchmark` (C client) EVALSHA of `return 1` / PING, 50 connections | ")
			.append((ceiling != null) ? scaled(ceiling.score()) : "—")
			.append(" | | ")
			.append((ping != null) ? "PING " + scaled(ping.score()) : "—")
			.append(" | | 1 |\n\n");
	}

	/**
	 * The client set-ups of {@link RedisDecisionCpu}, in table order, with what each call
	 * does. "Before" is the default the starter had when issue 23 was opened.
	 */
	private static final Map<String, String> CPU_ROWS = new LinkedHashMap<>();

	static {
		CPU_ROWS.put("memory", "baseline: `InMemoryRateLimiter.acquire`, no Redis");
		CPU_ROWS.put("lettuce", "**before**: ours on Lettuce, every default (Spring Boot's default client)");
		CPU_ROWS.put("lettuceEpoll", "ours on Lettuce with Netty's native epoll transport");
		CPU_ROWS.put("lettuceOneIoThread", "ours on Lettuce, one I/O and one computation thread");
		CPU_ROWS.put("lettucePublishOnScheduler", "ours on Lettuce, replies completed on computation threads");
		CPU_ROWS.put("jedisWorkers",
				"ours on Jedis through the generic `RedisConnection` API (before issue 23): each call handed to a "
						+ "worker thread, EVALSHA");
		CPU_ROWS.put("jedis",
				"**after**: ours on Jedis, each call on the caller's thread (`JedisScriptRunner`), FCALL");
		CPU_ROWS.put("lettuceTrivialScript",
				"*no limiter*: EVALSHA of `return 1` through a Lettuce connection as ours opens it");
		CPU_ROWS.put("socketTrivialScript",
				"*no limiter*: EVALSHA of `return 1` on a blocking socket per caller, read on the caller's thread");
	}

	private static void cpuTable(StringBuilder out, Map<String, Measurement> m) {
		out.append("### CPU per Redis decision\n\n");
		Measurement baseline = m.get("RedisDecisionCpu.memory");
		Measurement before = m.get("RedisDecisionCpu.lettuce");
		if (baseline == null || before == null) {
			out.append("Pending. ").append(REDIS_PENDING).append(".\n\n");
			return;
		}
		out.append("The application's CPU per synchronous decision, without HTTP (`RedisDecisionCpu`): 32 threads, as ")
			.append("Tomcat's under `wrk -c32`, each deciding one permit of a hot key and then waiting a random ")
			.append("(exponential) time, so that together they make about 5,000 calls per second, as the HTTP ")
			.append("benchmark's Redis instance did. Each set-up runs in a JVM of its own, warmed up, round after ")
			.append("round in a rotating order; *app* is the process's CPU time (user + system, every thread: ")
			.append("callers, the client's I/O threads, GC, JIT) over the measured seconds ÷ the calls made (error: ")
			.append("half the spread of the rounds), *per Redis decision* the same minus the in-memory baseline's ")
			.append("(the callers and their waits), as `Http.redis.cpuPerRequest` minus `Http.memory`'s. *Saturated*: ")
			.append("the same 32 callers without waiting, as many calls as they can make.\n\n");
		out.append("| set-up | app µs/call | per Redis decision µs | ÷ before | redis-server µs/call | calls/s ")
			.append("| failures | saturated: app µs/call | redis-server µs/call | calls/s |\n")
			.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		double beforeNet = before.score() - baseline.score();
		for (Map.Entry<String, String> row : CPU_ROWS.entrySet()) {
			Measurement app = m.get("RedisDecisionCpu." + row.getKey());
			if (app == null) {
				continue;
			}
			double net = app.score() - baseline.score();
			boolean redis = !"memory".equals(row.getKey());
			out.append("| ")
				.append(row.getValue())
				.append(" | ")
				.append(micros(app))
				.append(" | ")
				.append(redis ? String.format(Locale.ROOT, "%.1f", net) : "")
				.append(" | ")
				.append(redis ? format(net / beforeNet) : "")
				.append(" | ")
				.append(micros(m.get("RedisDecisionCpu." + row.getKey() + ".redisServer")))
				.append(" | ")
				.append(count(m.get("RedisDecisionCpu." + row.getKey() + ".decisions")))
				.append(" | ")
				.append(count(m.get("RedisDecisionCpu." + row.getKey() + ".failures")))
				.append(" | ")
				.append(micros(m.get("RedisDecisionCpuSaturated." + row.getKey())))
				.append(" | ")
				.append(micros(m.get("RedisDecisionCpuSaturated." + row.getKey() + ".redisServer")))
				.append(" | ")
				.append(count(m.get("RedisDecisionCpuSaturated." + row.getKey() + ".decisions")))
				.append(" |\n");
		}
		out.append('\n');
	}

	private static String micros(Measurement m) {
		if (m == null) {
			return "—";
		}
		return String.format(Locale.ROOT, "%.1f", m.score())
				+ (Double.isNaN(m.error()) ? "" : String.format(Locale.ROOT, " ± %.1f", m.error()));
	}

	private static String count(Measurement m) {
		return (m == null) ? "—" : String.format(Locale.ROOT, "%.0f", m.score());
	}

	/**
	 * Writes a table of the measurements whose names start with a prefix, under a heading
	 * (none if empty), or says that they are pending.
	 */
	private static void section(StringBuilder out, Map<String, Measurement> m, String heading, String prefix,
			String pending) {
		out.append(heading.isEmpty() ? "" : heading + "\n\n");
		List<Measurement> found = new ArrayList<>();
		for (Measurement measurement : m.values()) {
			if (measurement.name().startsWith(prefix)) {
				found.add(measurement);
			}
		}
		if (found.isEmpty()) {
			out.append("Pending. ").append(pending).append("\n\n");
			return;
		}
		out.append("| measurement | score | unit |\n|---|---:|---|\n");
		for (Measurement measurement : found) {
			boolean small = Math.abs(measurement.score()) < 100
					&& measurement.score() != Math.rint(measurement.score());
			out.append("| `")
				.append(measurement.name())
				.append("` | ")
				.append(small ? String.format(Locale.ROOT, "%.3f", measurement.score()) : opsPerSecond(measurement))
				.append(" | ")
				.append(measurement.unit())
				.append(" |\n");
		}
		out.append('\n');
	}

	private static String opsPerSecond(Measurement m) {
		if (Double.isNaN(m.error())) {
			return scaled(m.score());
		}
		return scaled(m.score()) + " ± " + scaled(m.error());
	}

	private static String scaled(double value) {
		if (Math.abs(value) >= 1e6) {
			return String.format(Locale.ROOT, "%.2f M", value / 1e6);
		}
		if (Math.abs(value) >= 1e4) {
			return String.format(Locale.ROOT, "%.1f k", value / 1e3);
		}
		return String.format(Locale.ROOT, "%.0f", value);
	}

	private static String whole(Object value) {
		return (value instanceof Double number) ? Long.toString(Math.round(number)) : String.valueOf(value);
	}

	static String format(double value) {
		return Double.isInfinite(value) ? "∞" : String.format(Locale.ROOT, "%.2f", value);
	}

	private static String cpuModel() {
		try {
			for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
				if (line.startsWith("model name")) {
					return line.substring(line.indexOf(':') + 1).strip();
				}
			}
		}
		catch (IOException ex) {
			// Not Linux: fall through.
		}
		return System.getProperty("os.arch");
	}

	private static String memTotal() {
		try {
			for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
				if (line.startsWith("MemTotal:")) {
					long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
					return String.format(Locale.ROOT, "%.1f GiB", kb / 1024.0 / 1024.0);
				}
			}
		}
		catch (IOException | NumberFormatException ex) {
			// Not Linux: fall through.
		}
		return "?";
	}

}
