package dev.ratelimit.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The report's arithmetic, from JMH-shaped result files written here: passes pooled by
 * their iterations, ratio ranges from both errors, the three verdicts, the lease
 * allowance and the pending rows.
 */
class BenchmarkReportTest {

	@TempDir
	Path directory;

	private Path results;

	@BeforeEach
	void createResultsDirectory() throws IOException {
		this.results = Files.createDirectory(this.directory.resolve("results"));
	}

	@Test
	void poolsTheIterationsOfBothPassesWithStudentsT() throws IOException {
		write("memory-pass1.json", jmh("OneKeyOneThread.oursTryAcquire", "path", "allowed", 11, 1, 10, 12),
				jmh("OneKeyOneThread.bucket4j", "path", "allowed", 10, 0.5, 10, 10));
		write("memory-pass2.json", jmh("OneKeyOneThread.oursTryAcquire", "path", "allowed", 15, 1, 14, 16),
				jmh("OneKeyOneThread.bucket4j", "path", "allowed", 10, 0.5, 10, 10));
		Report report = render();
		// mean of 10, 12, 14, 16 is 13 (the first pass alone would give 1.10, the last
		// 1.50); the half-width is
		// t(0.9995; 3) = 12.924 times s = sqrt(20 / 3) over sqrt(4): 16.69, and
		// Bucket4j's four equal scores have none
		assertThat(report.stdout()).contains("ratio memory-1t-vs-bucket4j 1.30\n");
		assertThat(report.markdown()).contains("| `memory-1t-vs-bucket4j` | 1.30 | 0.00 – 2.97 | ≥ 1.20 | met |");
		assertThat(report.markdown()).contains("2 passes of the in-memory classes");
	}

	@Test
	void tellsAMissWithinTheErrorFromAPlainMiss() throws IOException {
		write("redis.json", jmh("RedisOneThread.ours", "keys", "1", 9, 2, 9, 9),
				jmh("RedisOneThread.springCloudGateway", "keys", "1", 10, 0.5, 10, 10),
				jmh("RedisInFlight64.ours", "keys", "1", 10, 1, 10, 10),
				jmh("RedisInFlight64.springCloudGateway", "keys", "1", 20, 1, 20, 20));
		Report report = render();
		// 0.90, between 7 / 10.5 and 11 / 9.5: the run cannot tell
		assertThat(report.markdown())
			.contains("| `redis-1t-vs-scg` | 0.90 | 0.67 – 1.16 | ≥ 1.00 | **missed**, within the error |");
		// 0.50, between 9 / 21 and 11 / 19: missed for certain
		assertThat(report.markdown()).contains("| `redis-hot-64-vs-scg` | 0.50 | 0.43 – 0.58 | ≥ 1.30 | **missed** |");
	}

	@Test
	void measuresOursAgainstTheTrivialScriptAndShowsRedisBenchmarkAsContextOnly() throws IOException {
		write("redis.json", jmh("RedisInFlight64.ours", "keys", "1", 30000, 1000, 30000, 30000),
				jmh("RedisInFlight64.trivialScript", "keys", "1", 40000, 1000, 40000, 40000));
		Files.writeString(this.results.resolve("redis-ceiling.json"), """
				{"measurements": [{"name": "RedisCeiling.evalsha", "score": 60000, "unit": "ops/s"}]}
				""");
		Report report = render();
		assertThat(report.markdown())
			.contains("| `redis-hot-64-vs-trivial-script` | 0.75 | 0.71 – 0.79 | ≥ 0.80 | **missed** |")
			.containsPattern("\\| `redis-hot-64-vs-ceiling` \\| 0.50 \\|  \\| none \\| context only: .*C client");
		assertThat(report.stdout()).contains("ratio redis-hot-64-vs-trivial-script 0.75\n")
			.contains("ratio redis-hot-64-vs-ceiling 0.50\n");
	}

	@Test
	void showsTheCpuPerRedisDecisionNetOfTheInMemoryBaselineAgainstTheDefaultBefore() throws IOException {
		Files.writeString(this.results.resolve("redis-decision-cpu.json"), """
				{"measurements": [
				  {"name": "RedisDecisionCpu.memory", "score": 20, "error": 1, "unit": "µs"},
				  {"name": "RedisDecisionCpu.lettuce", "score": 100, "error": 4, "unit": "µs"},
				  {"name": "RedisDecisionCpu.lettuce.redisServer", "score": 55, "unit": "µs"},
				  {"name": "RedisDecisionCpu.lettuce.decisions", "score": 4900, "unit": "decisions/s"},
				  {"name": "RedisDecisionCpu.lettuce.failures", "score": 0, "unit": "calls"},
				  {"name": "RedisDecisionCpu.jedis", "score": 60, "error": 2, "unit": "µs"}
				]}
				""");
		String markdown = render().markdown();
		assertThat(markdown).contains("### CPU per Redis decision")
			.contains("| **before**: ours on Lettuce, every default (Spring Boot's default client) | 100.0 ± 4.0 | "
					+ "80.0 | 1.00 | 55.0 | 4900 | 0 | — | — | — |")
			// 60 - 20 = 40 µs per Redis decision, half of the 80 before
			.contains("each call on the caller's thread (`JedisScriptRunner`), FCALL | 60.0 ± 2.0 | 40.0 | 0.50 |");
	}

	@Test
	void allowsTheLeaseStillOpenWhenCountingStopped() throws IOException {
		// fills of 88 (100 less the 12 left when a busy key is filled ahead): 1,137 for
		// 100,000 decisions, and one open
		roundTrips(0.01137, 100_000);
		assertThat(render().markdown()).contains("| `redis-lease-round-trips-vs-plain` | 0.01 |  | ≤ 0.01 | met |");
	}

	@Test
	void missesTheLeaseTargetBeyondThatOneLease() throws IOException {
		// 1,140 round trips for 100,000 decisions: 1,137 fills of 88 and one open would
		// be 1,138
		roundTrips(0.0114, 100_000);
		assertThat(render().markdown())
			.contains("| `redis-lease-round-trips-vs-plain` | 0.01 |  | ≤ 0.01 | **missed** |");
	}

	@Test
	void marksRatiosWithoutResultsAsPending() throws IOException {
		write("memory-pass1.json", jmh("OneKeyOneThread.bucket4j", "path", "allowed", 10, 0.5, 10, 10));
		Report report = render();
		assertThat(report.markdown())
			.contains("| `http-memory-vs-off` | — | | ≥ 0.95 | pending: HTTP benchmarks not in this run |")
			.contains("| `memory-1t-vs-bucket4j` | — | | ≥ 1.20 | pending: no result for "
					+ "OneKeyOneThread.oursTryAcquire[path=allowed] or OneKeyOneThread.bucket4j[path=allowed] |");
		assertThat(report.stdout()).contains("# ratio http-memory-vs-off skipped: HTTP benchmarks not in this run\n")
			.doesNotContainPattern("(?m)^ratio memory-1t-vs-bucket4j ");
	}

	@Test
	void reportsTheNettyRatiosBesideTheServletOnesEachInItsOwnSection() throws IOException {
		Files.writeString(this.results.resolve("http.json"), http("Http", 12000, 10200, 6000));
		Files.writeString(this.results.resolve("http-netty.json"), http("HttpNetty", 20000, 18000, 8000));
		Report report = render();
		assertThat(report.stdout()).contains("ratio http-memory-vs-off 0.85\n")
			.contains("ratio http-redis-vs-off 0.50\n")
			.contains("ratio http-netty-memory-vs-off 0.90\n")
			.contains("ratio http-netty-redis-vs-off 0.40\n");
		String servlet = report.markdown()
			.substring(report.markdown().indexOf("## HTTP\n"), report.markdown().indexOf("## HTTP on Netty\n"));
		assertThat(servlet).contains("| `Http.off` | 12.0 k ± 100 | requests/s |").doesNotContain("HttpNetty.");
		assertThat(report.markdown()).contains("| `HttpNetty.off` | 20.0 k ± 100 | requests/s |")
			.contains("| `http-netty-memory-vs-off` | 0.90 | 0.89 – 0.91 | ≥ 0.95 | **missed** |");
	}

	@Test
	void marksTheNettyRatiosPendingWithoutTheirSection() throws IOException {
		Files.writeString(this.results.resolve("http.json"), http("Http", 12000, 10200, 6000));
		Report report = render();
		assertThat(report.stdout()).contains("ratio http-memory-vs-off 0.85\n")
			.contains("# ratio http-netty-memory-vs-off skipped: HTTP benchmarks on Netty not in this run\n");
		assertThat(report.markdown()).contains("Pending. HTTP benchmarks on Netty not in this run");
	}

	@Test
	void reportsThePeersRatiosAndTableFromTheirSection() throws IOException {
		Files.writeString(this.results.resolve("http-peers.json"), peers("""
				  {"name": "HttpPeers.bucket4j-redis", "score": 4000, "error": 100, "unit": "requests/s"},
				  {"name": "HttpPeers.bucket4j-redis.serverCpuPerRequest", "score": 21.5, "unit": "µs"}
				"""));
		Report report = render();
		assertThat(report.stdout()).contains("ratio http-memory-vs-resilience4j 1.10\n")
			.contains("ratio http-memory-vs-bucket4j-starter 1.20\n")
			.contains("ratio http-redis-vs-bucket4j-starter 2.00\n")
			.contains("ratio http-redis-reservoir-vs-off 0.90\n");
		// 9,000 / 10,000 with errors of 100 each: between 8,900 / 10,100 and 9,100 /
		// 9,900
		assertThat(report.markdown()).contains("| `http-redis-reservoir-vs-off` | 0.90 | 0.88 – 0.92 | ≥ 0.90 | met |")
			.contains("| `http-redis-vs-bucket4j-starter` | 2.00 | 1.93 – 2.08 | ≥ 1.50 | met |")
			.contains("| `redis` | **ours** on Redis | 8000 ± 100 | 0.80 | 3.25 | 0 | 61.0 | 12.5 | 2 |")
			.contains("| `bucket4j-redis` | `bucket4j-spring-boot-starter`'s servlet filter, Redis through Jedis "
					+ "| 4000 ± 100 | 0.40 |  |  |  | 21.5 |  |")
			.contains("| resilience4j-spring-boot4 (peers app) | 2.4.0 |");
	}

	@Test
	void marksTheRatioOfAPeerThatCouldNotRunAsBlocked() throws IOException {
		Files.writeString(this.results.resolve("http-peers.json"), peers("""
				  {"name": "HttpPeers.bucket4j-redis", "blocked": "No JedisPool found"}
				"""));
		Report report = render();
		assertThat(report.stdout()).contains(
				"# ratio http-redis-vs-bucket4j-starter skipped: blocked: HttpPeers.bucket4j-redis: No JedisPool found\n");
		assertThat(report.markdown())
			.contains("| `http-redis-vs-bucket4j-starter` | — | | ≥ 1.50 | blocked: HttpPeers.bucket4j-redis: "
					+ "No JedisPool found |")
			.contains("Redis through Jedis | blocked: No JedisPool found | | | | | | |");
	}

	@Test
	void marksThePeersRatiosPendingWithoutTheirSection() throws IOException {
		Files.writeString(this.results.resolve("http.json"), http("Http", 12000, 10200, 6000));
		Report report = render();
		assertThat(report.stdout())
			.contains("# ratio http-memory-vs-resilience4j skipped: HTTP peers not in this run\n");
		assertThat(report.markdown())
			.contains("| `http-redis-reservoir-vs-off` | — | | ≥ 0.90 | pending: HTTP peers not in this run |")
			.contains("Pending. HTTP peers not in this run.");
	}

	/**
	 * A peers result file: off 10,000 requests/s, ours in memory 12,000, on Redis 8,000
	 * and with a reservoir 9,000, Resilience4j 10,909.09, Bucket4j in memory 10,000, and
	 * Bucket4j on Redis as given.
	 */
	private static String peers(String bucket4jRedis) {
		return """
				{"measurements": [
				  {"name": "HttpPeers.redis.backendFailures", "score": 2, "unit": "calls"},
				  {"name": "HttpPeers.off", "score": 10000, "error": 100, "unit": "requests/s"},
				  {"name": "HttpPeers.memory", "score": 12000, "error": 100, "unit": "requests/s"},
				  {"name": "HttpPeers.redis", "score": 8000, "error": 100, "unit": "requests/s"},
				  {"name": "HttpPeers.redis.p99", "score": 3.25, "unit": "ms"},
				  {"name": "HttpPeers.redis.non2xx", "score": 0, "unit": "responses"},
				  {"name": "HttpPeers.redis.cpuPerRequest", "score": 61.0, "unit": "µs"},
				  {"name": "HttpPeers.redis.serverCpuPerRequest", "score": 12.5, "unit": "µs"},
				  {"name": "HttpPeers.redis-reservoir", "score": 9000, "error": 100, "unit": "requests/s"},
				  {"name": "HttpPeers.resilience4j", "score": 10909.09, "error": 100, "unit": "requests/s"},
				  {"name": "HttpPeers.bucket4j-memory", "score": 10000, "error": 100, "unit": "requests/s"},
				""" + bucket4jRedis + """
				], "versions": {"resilience4j-spring-boot4": "2.4.0"}}
				""";
	}

	private static String http(String prefix, double off, double memory, double redis) {
		return String.format(Locale.ROOT, """
				{"measurements": [
				  {"name": "%1$s.off", "score": %2$.2f, "error": 100, "unit": "requests/s"},
				  {"name": "%1$s.memory", "score": %3$.2f, "error": 100, "unit": "requests/s"},
				  {"name": "%1$s.redis", "score": %4$.2f, "error": 100, "unit": "requests/s"},
				  {"name": "%1$s.redis.p99", "score": 12.5, "unit": "ms"}
				]}
				""", prefix, off, memory, redis);
	}

	private void roundTrips(double leasePerDecision, long decisions) throws IOException {
		String json = String.format(Locale.ROOT, """
				{"measurements": [
				  {"name": "RedisRoundTrips.ours", "score": 1.0, "unit": "commands sent/decision"},
				  {"name": "RedisRoundTrips.oursLease", "score": %f, "unit": "commands sent/decision"},
				  {"name": "RedisRoundTrips.oursLease.decisions", "score": %d, "unit": "decisions counted"}
				]}
				""", leasePerDecision, decisions);
		Files.writeString(this.results.resolve("redis-round-trips.json"), json);
	}

	private static String jmh(String benchmark, String param, String value, double score, double error,
			double... iterations) {
		StringBuilder raw = new StringBuilder();
		for (double iteration : iterations) {
			raw.append((raw.length() > 0) ? ", " : "").append(iteration);
		}
		return String.format(Locale.ROOT, """
				{"jmhVersion": "1.37", "benchmark": "dev.ratelimit.benchmarks.%s", "mode": "thrpt", "threads": 1,
				 "forks": 1, "jvmArgs": [], "jdkVersion": "17", "vmName": "test", "vmVersion": "17",
				 "warmupIterations": 1, "warmupTime": "1 s", "measurementIterations": %d, "measurementTime": "1 s",
				 "params": {"%s": "%s"},
				 "primaryMetric": {"score": %s, "scoreError": %s, "scoreUnit": "ops/s", "rawData": [[%s]]},
				 "secondaryMetrics": {}}
				""", benchmark, iterations.length, param, value, score, error, raw);
	}

	private void write(String file, String... results) throws IOException {
		Files.writeString(this.results.resolve(file), "[" + String.join(",", results) + "]");
	}

	private Report render() throws IOException {
		Path markdown = this.directory.resolve("BENCHMARKS.md");
		PrintStream original = System.out;
		ByteArrayOutputStream stdout = new ByteArrayOutputStream();
		System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
		try {
			BenchmarkReport.main(new String[] { this.results.toString(), markdown.toString(), "full", "test" });
		}
		finally {
			System.setOut(original);
		}
		return new Report(Files.readString(markdown), stdout.toString(StandardCharsets.UTF_8));
	}

	private record Report(String markdown, String stdout) {
	}

}
