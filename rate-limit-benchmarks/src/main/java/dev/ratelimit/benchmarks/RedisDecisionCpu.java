package dev.ratelimit.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import com.sun.management.OperatingSystemMXBean;

/**
 * The application's CPU per synchronous Redis decision, without HTTP: 32 threads (as
 * Tomcat's under {@code wrk -c32}) call {@code RedisRateLimiter.acquire} on one hot key
 * for a fixed time, and the process's CPU time (user + system, every thread: callers, the
 * client's I/O threads, GC, JIT) is divided by the decisions made. Each client set-up
 * runs in a JVM of its own, round after round in a rotating order, so that the machine's
 * drifting load falls on every set-up alike.
 */
public final class RedisDecisionCpu {

	/** Callers, as Tomcat's request threads under 32 connections. */
	static final int THREADS = 32;

	private RedisDecisionCpu() {
	}

	/**
	 * Usage:
	 * {@code RedisDecisionCpu RATE WARMUP_SECONDS SECONDS ROUNDS OUTPUT.json SETUP...}
	 * (each set-up measured in a JVM of its own per round), or
	 * {@code RedisDecisionCpu --one SETUP RATE WARMUP_SECONDS SECONDS} (one measurement,
	 * in this JVM). {@code RATE} is the calls per second of all callers together, at
	 * random times; 0 for as many as they can make. {@code BENCH_REDIS_PORT} names the
	 * server; {@code BENCH_REDIS_PID}, if set, its process, whose CPU per decision is
	 * reported too.
	 * @param args the arguments
	 * @throws Exception if a measurement fails
	 */
	public static void main(String[] args) throws Exception {
		if (args.length > 0 && args[0].equals("--one")) {
			Sample sample = measure(RedisClientSetup.of(args[1]), Double.parseDouble(args[2]),
					Double.parseDouble(args[3]), Double.parseDouble(args[4]));
			System.out.println(sample.line());
			return;
		}
		double rate = Double.parseDouble(args[0]);
		double warmUp = Double.parseDouble(args[1]);
		double seconds = Double.parseDouble(args[2]);
		int rounds = Integer.parseInt(args[3]);
		List<String> setups = List.of(args).subList(5, args.length);
		Map<String, List<Sample>> samples = new LinkedHashMap<>();
		for (int round = 0; round < rounds; round++) {
			for (int i = 0; i < setups.size(); i++) {
				String setup = setups.get((i + round) % setups.size());
				Sample sample;
				try {
					sample = child(setup, rate, warmUp, seconds);
				}
				catch (IllegalStateException ex) {
					// a set-up this machine cannot run (no native epoll): left out of the
					// report
					System.out.println(
							"cpu per decision round " + (round + 1) + " " + setup + " skipped: " + ex.getMessage());
					continue;
				}
				samples.computeIfAbsent(setup, (k) -> new ArrayList<>()).add(sample);
				System.out.printf(Locale.ROOT,
						"cpu per decision round %d %s: %.1f µs app, %.1f µs redis-server, %.0f decisions/s, "
								+ "%d failures%n",
						round + 1, setup, sample.cpuMicrosPerDecision(), sample.redisMicrosPerDecision(),
						sample.perSecond(), sample.failures());
			}
		}
		List<String> lines = new ArrayList<>();
		for (String setup : setups) {
			List<Sample> runs = samples.get(setup);
			if (runs == null) {
				continue;
			}
			long decisions = runs.stream().mapToLong(Sample::decisions).sum();
			double cpu = runs.stream().mapToLong(Sample::cpuNanos).sum() / 1e3 / decisions;
			double redis = runs.stream().mapToLong(Sample::redisNanos).sum() / 1e3 / decisions;
			double wall = runs.stream().mapToLong(Sample::wallNanos).sum() / 1e9;
			double low = runs.stream().mapToDouble(Sample::cpuMicrosPerDecision).min().orElse(Double.NaN);
			double high = runs.stream().mapToDouble(Sample::cpuMicrosPerDecision).max().orElse(Double.NaN);
			long failures = runs.stream().mapToLong(Sample::failures).sum();
			System.out.printf(Locale.ROOT,
					"cpu per decision %s: %.1f µs app (rounds %.1f to %.1f), %.1f µs redis-server, %.0f decisions/s, "
							+ "%d failures%n",
					setup, cpu, low, high, redis, decisions / wall, failures);
			String name = ((rate > 0) ? "RedisDecisionCpu." : "RedisDecisionCpuSaturated.") + setup;
			lines.add(measurement(name, cpu, (high - low) / 2, "µs CPU/decision (app)"));
			lines.add(measurement(name + ".redisServer", redis, Double.NaN, "µs CPU/decision (redis-server)"));
			lines.add(measurement(name + ".decisions", decisions / wall, Double.NaN, "decisions/s"));
			lines.add(measurement(name + ".failures", failures, Double.NaN, "failed Redis calls"));
		}
		Files.writeString(java.nio.file.Path.of(args[4]),
				"{\"measurements\": [\n" + String.join(",\n", lines) + "\n]}\n");
	}

	private static String measurement(String name, double score, double error, String unit) {
		return String.format(Locale.ROOT, "  {\"name\": \"%s\", \"score\": %.6f, %s\"unit\": \"%s\"}", name, score,
				Double.isNaN(error) ? "" : String.format(Locale.ROOT, "\"error\": %.6f, ", error), unit);
	}

	/** Runs one measurement in a JVM of its own, with the set-up's JVM options. */
	private static Sample child(String setup, double rate, double warmUp, double seconds)
			throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.add("-Xms1g");
		command.add("-Xmx1g");
		command.addAll(RedisClientSetup.of(setup).jvmOptions());
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(RedisDecisionCpu.class.getName());
		command.add("--one");
		command.add(setup);
		command.add(Double.toString(rate));
		command.add(Double.toString(warmUp));
		command.add(Double.toString(seconds));
		Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		String last = null;
		Map<String, long[]> threads = new TreeMap<>();
		try (BufferedReader out = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			for (String line = out.readLine(); line != null; line = out.readLine()) {
				if (line.startsWith("threads ")) {
					String[] f = line.split(" ");
					threads.put(f[1], new long[] { Long.parseLong(f[2]), Long.parseLong(f[3]) });
				}
				else {
					last = line;
				}
			}
		}
		int exit = process.waitFor();
		if (exit != 0 || last == null) {
			throw new IllegalStateException("the measurement of " + setup + " failed (exit " + exit + ")");
		}
		Sample sample = Sample.parse(last);
		StringBuilder breakdown = new StringBuilder("  threads of " + setup + " (µs user + system per decision):");
		threads.forEach((group, ticks) -> {
			if (ticks[0] + ticks[1] > 0) {
				breakdown.append(String.format(Locale.ROOT, " %s %.1f+%.1f", group,
						ticks[0] * 1e6 / CLOCK_TICKS / sample.decisions(),
						ticks[1] * 1e6 / CLOCK_TICKS / sample.decisions()));
			}
		});
		System.out.println(breakdown);
		return sample;
	}

	static Sample measure(RedisClientSetup setup, double rate, double warmUp, double seconds) throws Exception {
		AtomicLong failures = new AtomicLong();
		try (RedisClientSetup.Client client = setup.connect()) {
			RedisClientSetup.Call call = client.call(failures);
			LongAdder decisions = new LongAdder();
			CountDownLatch stopped = new CountDownLatch(THREADS);
			AtomicBoolean running = new AtomicBoolean(true);
			// paced: each caller's calls arrive at random (exponential gaps), so that the
			// callers together make `rate` calls per second, as independent requests
			// would
			double meanGapNanos = (rate > 0) ? THREADS * 1e9 / rate : 0;
			for (int t = 0; t < THREADS; t++) {
				Thread thread = new Thread(() -> {
					SplittableRandom random = new SplittableRandom();
					long next = System.nanoTime();
					while (true) {
						if (meanGapNanos > 0) {
							// one that fell behind (a pause) does not catch up in a
							// burst, as a
							// client waiting for its answers would not
							next = Math.max(next, System.nanoTime())
									+ (long) (-Math.log(1 - random.nextDouble()) * meanGapNanos);
							for (long wait = next - System.nanoTime(); wait > 0; wait = next - System.nanoTime()) {
								LockSupport.parkNanos(wait);
							}
						}
						if (!running.get()) {
							break;
						}
						try {
							call.run();
							decisions.increment();
						}
						catch (Exception ex) {
							failures.incrementAndGet();
						}
					}
					stopped.countDown();
				}, "caller-" + t);
				thread.setDaemon(true);
				thread.start();
			}
			Thread.sleep((long) (warmUp * 1000));
			failures.set(0);
			OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
			long redisPid = redisPid();
			Map<String, long[]> threadsBefore = threadTicks();
			long cpuBefore = os.getProcessCpuTime();
			long redisBefore = cpuNanos(redisPid);
			long decisionsBefore = decisions.sum();
			long wallBefore = System.nanoTime();
			Thread.sleep((long) (seconds * 1000));
			long cpuAfter = os.getProcessCpuTime();
			Map<String, long[]> threadsAfter = threadTicks();
			running.set(false);
			long redisAfter = cpuNanos(redisPid);
			long decisionsAfter = decisions.sum();
			long wallAfter = System.nanoTime();
			stopped.await();
			threadsAfter.forEach((group, ticks) -> {
				long[] before = threadsBefore.getOrDefault(group, new long[2]);
				System.out.println("threads " + group.replace(' ', '_') + " " + (ticks[0] - before[0]) + " "
						+ (ticks[1] - before[1]));
			});
			return new Sample(decisionsAfter - decisionsBefore, cpuAfter - cpuBefore, redisAfter - redisBefore,
					wallAfter - wallBefore, failures.get());
		}
	}

	/**
	 * User and system CPU ticks of this process's threads so far, by thread name without
	 * its number (callers, the client's I/O threads, GC, JIT compilers).
	 */
	private static Map<String, long[]> threadTicks() throws IOException {
		Map<String, long[]> groups = new TreeMap<>();
		try (DirectoryStream<java.nio.file.Path> tasks = Files
			.newDirectoryStream(java.nio.file.Path.of("/proc/self/task"))) {
			for (java.nio.file.Path task : tasks) {
				String stat;
				try {
					stat = Files.readString(task.resolve("stat"));
				}
				catch (IOException ex) {
					continue; // the thread ended
				}
				String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "N");
				String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
				long[] ticks = groups.computeIfAbsent(name, (k) -> new long[2]);
				ticks[0] += Long.parseLong(fields[11]);
				ticks[1] += Long.parseLong(fields[12]);
			}
		}
		return groups;
	}

	private static long redisPid() {
		String pid = System.getenv("BENCH_REDIS_PID");
		return (pid == null || pid.isBlank()) ? -1 : Long.parseLong(pid.strip());
	}

	/** CPU time (user + system) of another process so far, from /proc; 0 if unknown. */
	private static long cpuNanos(long pid) throws IOException {
		if (pid < 0) {
			return 0;
		}
		String stat = Files.readString(java.nio.file.Path.of("/proc/" + pid + "/stat"));
		// the fields after the command name, which is in parentheses and may hold spaces
		String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
		long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
		return ticks * 1_000_000_000L / CLOCK_TICKS;
	}

	/** The kernel's clock ticks per second (USER_HZ), 100 on Linux. */
	private static final long CLOCK_TICKS = 100;

	/** One measurement: decisions made, CPU time used, wall time, failures. */
	record Sample(long decisions, long cpuNanos, long redisNanos, long wallNanos, long failures) {

		double cpuMicrosPerDecision() {
			return this.cpuNanos / 1e3 / this.decisions;
		}

		double redisMicrosPerDecision() {
			return this.redisNanos / 1e3 / this.decisions;
		}

		double perSecond() {
			return this.decisions / (this.wallNanos / 1e9);
		}

		String line() {
			return "sample " + this.decisions + " " + this.cpuNanos + " " + this.redisNanos + " " + this.wallNanos + " "
					+ this.failures;
		}

		static Sample parse(String line) {
			String[] f = line.split(" ");
			if (!f[0].equals("sample")) {
				throw new IllegalStateException("not a sample: " + line);
			}
			return new Sample(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
					Long.parseLong(f[5]));
		}

	}

}
