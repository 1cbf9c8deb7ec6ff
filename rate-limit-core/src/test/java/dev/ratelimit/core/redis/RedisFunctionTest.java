package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The script as a Redis 7 function (FCALL) on the Lettuce path, and its script form
 * (EVALSHA) where functions are missing or unavailable: decisions use FCALL, a server
 * that forgets the library gets it back while no decision waits, a server without FCALL
 * decides with EVALSHA, every master of a cluster gets the library, and both forms give
 * the same answers and leave the same keys; a call that does not wait takes the same
 * fallbacks.
 */
class RedisFunctionTest {

	private static final DecideScript SCRIPT = DecideScript.load();

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/** A server as it comes. */
	private static RedisServer functions;

	/**
	 * A server without FCALL: Redis 7 with the command renamed away (as Redis 6), or a
	 * Redis 6 binary.
	 */
	private static RedisServer scriptsOnly;

	private static LettuceConnectionFactory functionsFactory;

	private static LettuceConnectionFactory scriptsOnlyFactory;

	@BeforeAll
	static void start() {
		functions = RedisServer.start();
		scriptsOnly = hasFunctions(functions) ? RedisServer.start("--rename-command", "FCALL", "")
				: RedisServer.start();
		functionsFactory = functions.endpoint().lettuce();
		scriptsOnlyFactory = scriptsOnly.endpoint().lettuce();
	}

	@AfterAll
	static void stop() {
		functionsFactory.destroy();
		scriptsOnlyFactory.destroy();
		functions.close();
		scriptsOnly.close();
	}

	@Test
	void decisionsRunThroughFcall() {
		assumeFunctions(functions);
		RedisRateLimiter limiter = limiter(functionsFactory, TestRedis.uniquePrefix());
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("5/1h"));
		try (RespClient client = functions.endpoint().client()) {
			awaitLibrary(limiter, client);
			client.command("CONFIG", "RESETSTAT");
			assertExactCounting(limiter, limit, 0, 8);
			String stats = client.text("INFO", "commandstats");
			assertThat(calls(stats, "fcall")).isEqualTo(8);
			assertThat(calls(stats, "evalsha") + calls(stats, "eval")).isZero();
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void aServerThatForgetsTheLibraryGetsItBackWhileDecisionsGoOn() {
		try (RedisServer server = RedisServer.start()) {
			assumeFunctions(server);
			LettuceConnectionFactory factory = server.endpoint().lettuce();
			RedisRateLimiter limiter = limiter(factory, TestRedis.uniquePrefix());
			KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("10/1h"));
			try (RespClient client = server.endpoint().client()) {
				awaitLibrary(limiter, client);
				assertExactCounting(limiter, limit, 0, 3);
				// as after a restart without persistence: the library is gone, the state
				// is not
				client.command("FUNCTION", "DELETE", SCRIPT.libraryName());
				client.command("CONFIG", "RESETSTAT");
				assertExactCounting(limiter, limit, 3, 1);
				String stats = client.text("INFO", "commandstats");
				assertThat(calls(stats, "evalsha") + calls(stats, "eval")).as("the decision ran as a script")
					.isEqualTo(1);
				awaitLibrary(limiter, client);
				client.command("CONFIG", "RESETSTAT");
				assertExactCounting(limiter, limit, 4, 8);
				stats = client.text("INFO", "commandstats");
				assertThat(calls(stats, "fcall")).isEqualTo(8);
				assertThat(calls(stats, "evalsha") + calls(stats, "eval")).isZero();
			}
			finally {
				limiter.close();
				factory.destroy();
			}
		}
	}

	@Test
	void anAsynchronousCallFallsBackToEvalshaThenEvalAsTheCallsThatWait() {
		try (RedisServer server = RedisServer.start()) {
			assumeFunctions(server);
			LettuceConnectionFactory factory = server.endpoint().lettuce();
			RedisRateLimiter limiter = limiter(factory, TestRedis.uniquePrefix());
			KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("10/1h"));
			try (RespClient client = server.endpoint().client()) {
				awaitLibrary(limiter, client);
				assertExactCountingAsync(limiter, limit, 0, 3);
				// as after a restart without persistence: neither the library nor the
				// script is known
				client.command("FUNCTION", "DELETE", SCRIPT.libraryName());
				client.command("SCRIPT", "FLUSH");
				client.command("CONFIG", "RESETSTAT");
				assertExactCountingAsync(limiter, limit, 3, 1);
				String stats = client.text("INFO", "commandstats");
				assertThat(calls(stats, "eval")).as("the decision ran as a script sent whole").isEqualTo(1);
				awaitLibrary(limiter, client);
				client.command("CONFIG", "RESETSTAT");
				assertExactCountingAsync(limiter, limit, 4, 6);
				stats = client.text("INFO", "commandstats");
				assertThat(calls(stats, "fcall")).isEqualTo(6);
				assertThat(calls(stats, "evalsha") + calls(stats, "eval")).isZero();
			}
			finally {
				limiter.close();
				factory.destroy();
			}
		}
	}

	@Test
	void aServerWithoutFcallDecidesAsynchronouslyWithEvalsha() {
		RedisRateLimiter limiter = limiter(scriptsOnlyFactory, TestRedis.uniquePrefix());
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("5/1h"));
		try (RespClient client = scriptsOnly.endpoint().client()) {
			assertExactCountingAsync(limiter, limit, 0, 1);
			client.command("CONFIG", "RESETSTAT");
			assertExactCountingAsync(limiter, limit, 1, 7);
			String stats = client.text("INFO", "commandstats");
			assertThat(calls(stats, "evalsha")).isEqualTo(7);
			assertThat(calls(stats, "fcall") + calls(stats, "eval")).isZero();
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void aServerWithoutFcallDecidesWithEvalsha() {
		RedisRateLimiter limiter = limiter(scriptsOnlyFactory, TestRedis.uniquePrefix());
		KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("5/1h"));
		try (RespClient client = scriptsOnly.endpoint().client()) {
			// the first decision finds out that there is no FCALL
			assertExactCounting(limiter, limit, 0, 1);
			client.command("CONFIG", "RESETSTAT");
			assertExactCounting(limiter, limit, 1, 7);
			String stats = client.text("INFO", "commandstats");
			assertThat(calls(stats, "evalsha")).isEqualTo(7);
			assertThat(calls(stats, "fcall") + calls(stats, "eval")).isZero();
		}
		finally {
			limiter.close();
		}
	}

	@Test
	void overMaxmemoryACallAnswersAsTheScriptWould() {
		try (RedisServer server = RedisServer.start()) {
			assumeFunctions(server);
			LettuceConnectionFactory factory = server.endpoint().lettuce();
			RedisRateLimiter limiter = limiter(factory, TestRedis.uniquePrefix());
			KeyedLimit limit = new KeyedLimit("api", "client", Limit.tokenBucket("10/1h"));
			try (RespClient client = server.endpoint().client()) {
				awaitLibrary(limiter, client);
				assertExactCounting(limiter, limit, 0, 2);
				client.command("CONFIG", "SET", "maxmemory", "1");
				try {
					// Redis refuses FCALL of a function that may write; a script runs
					// until its first write
					assertThat(limiter.inspect(List.of(limit)).get(0).remaining()).isEqualTo(8);
					assertThat(limiter.acquire(limit).source()).isEqualTo(Decision.Source.FAILED_OPEN);
				}
				finally {
					client.command("CONFIG", "SET", "maxmemory", "0");
				}
			}
			finally {
				limiter.close();
				factory.destroy();
			}
		}
	}

	@Test
	void everyMasterOfAClusterGetsTheLibraryAndGiveBacksWorkWithoutIt() throws Exception {
		assumeFunctions(functions);
		try (RedisCluster cluster = RedisCluster.start()) {
			LettuceConnectionFactory factory = cluster.lettuce();
			String prefix = TestRedis.uniquePrefix();
			RedisKeys keys = new RedisKeys(prefix);
			RedisRateLimiter limiter = limiter(factory, prefix);
			try {
				Map<RedisServer, KeyedLimit> clientOf = new HashMap<>();
				for (int i = 0; clientOf.size() < cluster.nodes().size(); i++) {
					KeyedLimit client = new KeyedLimit("api", "client-" + i, Limit.tokenBucket("10/1h"));
					clientOf.putIfAbsent(cluster.nodeOf(RedisKeys.slot(keys.key(client))), client);
				}
				for (KeyedLimit client : clientOf.values()) {
					assertExactCounting(limiter, client, 0, 4);
				}
				for (RedisServer node : cluster.nodes()) {
					try (RespClient client = node.endpoint().client()) {
						awaitLibrary(limiter, client);
					}
				}
				// a node that forgets the library gets it back from the next call that
				// misses it there
				RedisServer forgetful = cluster.nodes().get(1);
				try (RespClient client = forgetful.endpoint().client()) {
					client.command("FUNCTION", "DELETE", SCRIPT.libraryName());
					assertExactCounting(limiter, clientOf.get(forgetful), 4, 1);
					awaitLibrary(limiter, client);
				}
				// give-backs run as scripts where the library is missing
				KeyedLimit global = new KeyedLimit("global", "", Limit.tokenBucket("100/1h"));
				KeyedLimit tight = new KeyedLimit("per-client", "c", Limit.fixedWindow("1/1h"));
				assertThat(RedisKeys.slot(keys.key(global))).isNotEqualTo(RedisKeys.slot(keys.key(tight)));
				assertThat(limiter.acquire(List.of(global, tight), 1).isAllowed()).isTrue();
				for (RedisServer node : cluster.nodes()) {
					try (RespClient client = node.endpoint().client()) {
						client.command("FUNCTION", "DELETE", SCRIPT.libraryName());
					}
				}
				for (int i = 0; i < 3; i++) {
					Decision rejected = limiter.acquire(List.of(global, tight), 1);
					assertThat(rejected.source()).isEqualTo(Decision.Source.BACKEND);
					assertThat(rejected.isAllowed()).isFalse();
				}
				assertThat(limiter.awaitCompensations(TIMEOUT)).isTrue();
				assertThat(limiter.inspect(List.of(global)).get(0).remaining()).isEqualTo(99);
				for (RedisServer node : cluster.nodes()) {
					try (RespClient client = node.endpoint().client()) {
						awaitLibrary(limiter, client);
					}
				}
			}
			finally {
				limiter.close();
				factory.destroy();
			}
		}
	}

	static List<Limit> limits() {
		return RedisDifferentialTest.limits().toList();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void bothFormsDecideAlikeAndLeaveTheSameKeys(Limit limit) {
		assumeFunctions(functions);
		String prefix = TestRedis.uniquePrefix();
		ManualTimeSource clock = new ManualTimeSource();
		RedisRateLimiter viaFunction = limiter(functionsFactory, prefix, clock);
		RedisRateLimiter viaScript = limiter(scriptsOnlyFactory, prefix, clock);
		List<KeyedLimit> targets = List.of(new KeyedLimit("p", "alice", limit), new KeyedLimit("p", "bob", limit),
				new KeyedLimit("other", "alice", Limit.tokenBucket("4/1s", 6)),
				new KeyedLimit("global", "", Limit.slidingWindowCounter("12/1s")));
		Random random = new Random(limit.toString().hashCode());
		List<Decision[]> held = new ArrayList<>();
		try (RespClient withFunctions = functions.endpoint().client();
				RespClient withScripts = scriptsOnly.endpoint().client()) {
			withFunctions.command("CONFIG", "RESETSTAT");
			withScripts.command("CONFIG", "RESETSTAT");
			for (int step = 0; step < 150; step++) {
				clock.advanceMicros(random.nextLong(limit.windowMicros() / 4 + 1));
				if (!held.isEmpty() && random.nextInt(4) == 0) {
					Decision[] pair = held.remove(random.nextInt(held.size()));
					viaFunction.release(pair[0]);
					viaScript.release(pair[1]);
					continue;
				}
				List<KeyedLimit> call = new ArrayList<>(List.of(targets.get(random.nextInt(2))));
				if (random.nextBoolean()) {
					call.add(targets.get(2 + random.nextInt(2)));
				}
				long cost = (random.nextInt(8) == 0) ? random.nextLong(limit.capacity() + 2) : 1;
				Decision one = viaFunction.acquire(call, cost);
				Decision other = viaScript.acquire(call, cost);
				assertThat(one.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(other.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(other.statuses()).as("step %d", step).isEqualTo(one.statuses());
				assertThat(other.leases()).hasSameSizeAs(one.leases());
				if (!one.leases().isEmpty()) {
					held.add(new Decision[] { one, other });
				}
			}
			assertThat(state(withScripts, prefix)).isEqualTo(state(withFunctions, prefix)).isNotEmpty();
			assertThat(calls(withFunctions.text("INFO", "commandstats"), "evalsha")).isZero();
			assertThat(calls(withScripts.text("INFO", "commandstats"), "fcall")).isZero();
		}
		finally {
			viaFunction.close();
			viaScript.close();
		}
	}

	@Test
	void tellsTheErrorRepliesOfRedisApart() {
		assertThat(LettuceScriptRunner.isFunctionMissing("ERR Function not found")).isTrue();
		assertThat(LettuceScriptRunner.isFunctionsUnavailable("ERR Function not found")).isFalse();
		assertThat(LettuceScriptRunner
			.isFunctionsUnavailable("ERR unknown command 'fcall', with args beginning with: 'f' '1' 'k' ")).isTrue();
		assertThat(LettuceScriptRunner
			.isFunctionsUnavailable("ERR unknown command `fcall`, with args beginning with: `f`, `1`, ")).isTrue();
		assertThat(LettuceScriptRunner
			.isFunctionsUnavailable("NOPERM this user has no permissions to run the 'fcall' command")).isTrue();
		assertThat(LettuceScriptRunner.isFunctionsUnavailable("ERR unsupported command 'fcall'")).isTrue();
		assertThat(LettuceScriptRunner
			.isFunctionsUnavailable("ERR Unknown Redis command called from script script: f9, on @user_function:2."))
			.isFalse();
		assertThat(LettuceScriptRunner.isFunctionMissing("ERR user_function:12: attempt to index a nil value"))
			.isFalse();
		assertThat(
				LettuceScriptRunner.isRefusedBeforeRunning("OOM command not allowed when used memory > 'maxmemory'."))
			.isTrue();
		assertThat(LettuceScriptRunner.isRefusedBeforeRunning("ERR Function not found")).isFalse();
		assertThat(LettuceScriptRunner.isAlreadyLoaded("ERR Library 'ratelimit_0123456789ab' already exists")).isTrue();
		assertThat(LettuceScriptRunner
			.isPermanentLoadFailure("ERR unknown command 'function', with args beginning with: 'LOAD' '#!lua name=x' "))
			.isTrue();
		assertThat(LettuceScriptRunner
			.isPermanentLoadFailure("NOPERM this user has no permissions to run the 'function|load' command")).isTrue();
		assertThat(LettuceScriptRunner.isPermanentLoadFailure("LOADING Redis is loading the dataset in memory"))
			.isFalse();
	}

	@Test
	void namesTheLibraryAndTheFunctionAfterTheScript() {
		String hash = SCRIPT.script().getSha1().substring(0, 12);
		assertThat(SCRIPT.libraryName()).isEqualTo("ratelimit_" + hash);
		assertThat(SCRIPT.functionName()).isEqualTo("ratelimit_decide_" + hash);
		assertThat(SCRIPT.library()).startsWith("#!lua name=ratelimit_" + hash + "\n")
			.doesNotContain("replicate_commands")
			.endsWith("redis.register_function('ratelimit_decide_" + hash + "', decide)\n");
		assertThat(SCRIPT.script().getScriptAsString()).contains("redis.replicate_commands()")
			.endsWith("return decide(_G.KEYS, _G.ARGV)\n");
	}

	private static RedisRateLimiter limiter(LettuceConnectionFactory factory, String prefix) {
		return RedisRateLimiter.builder(factory).keyPrefix(prefix).timeout(TIMEOUT).build();
	}

	private static RedisRateLimiter limiter(LettuceConnectionFactory factory, String prefix, ManualTimeSource clock) {
		return RedisRateLimiter.builder(factory).keyPrefix(prefix).timeout(TIMEOUT).timeSource(clock).build();
	}

	/**
	 * Makes {@code calls} decisions of a token bucket (capacity well above the refill of
	 * the test's duration) that has {@code taken} permits taken, and checks each one's
	 * exact count.
	 */
	private static void assertExactCounting(RedisRateLimiter limiter, KeyedLimit limit, long taken, int calls) {
		long capacity = limit.limit().capacity();
		for (int i = 0; i < calls; i++) {
			Decision decision = limiter.acquire(limit);
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			long before = taken + i;
			assertThat(decision.isAllowed()).as("call %d with %d taken", i, before).isEqualTo(before < capacity);
			assertThat(decision.remaining()).isEqualTo(Math.max(0, capacity - before - 1));
		}
	}

	/**
	 * Checks decisions as {@link #assertExactCounting} does, made with
	 * {@link RedisRateLimiter#acquireAsync}.
	 */
	private static void assertExactCountingAsync(RedisRateLimiter limiter, KeyedLimit limit, long taken, int calls) {
		long capacity = limit.limit().capacity();
		for (int i = 0; i < calls; i++) {
			Decision decision = limiter.acquireAsync(List.of(limit), 1).join();
			assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
			long before = taken + i;
			assertThat(decision.isAllowed()).as("call %d with %d taken", i, before).isEqualTo(before < capacity);
			assertThat(decision.remaining()).isEqualTo(Math.max(0, capacity - before - 1));
		}
	}

	/**
	 * Every key of a prefix with its type, its content (lease ids left out) and its time
	 * to live to the nearest minute (the limiters have an explicit clock, so every key
	 * lives at least an hour).
	 */
	private static Map<String, String> state(RespClient client, String prefix) {
		Map<String, String> state = new HashMap<>();
		List<?> keys = (List<?>) client.command("KEYS", prefix + ":*");
		for (Object key : keys) {
			String name = (String) key;
			String type = client.text("TYPE", name);
			Object content = switch (type) {
				case "hash" -> pairs((List<?>) client.command("HGETALL", name));
				case "zset" -> ((List<?>) client.command("ZRANGE", name, "0", "-1", "WITHSCORES")).stream()
					.map((member) -> String.valueOf(member).replaceFirst("^[0-9a-f]{32}:", "lease:"))
					.toList();
				default -> type;
			};
			long ttlMinutes = (client.number("PTTL", name) + 30_000) / 60_000;
			state.put(name, type + " " + content + " ttl " + ttlMinutes + "min");
		}
		return state;
	}

	private static Map<String, String> pairs(List<?> flat) {
		Map<String, String> map = new TreeMap<>();
		for (int i = 0; i < flat.size(); i += 2) {
			map.put(String.valueOf(flat.get(i)), String.valueOf(flat.get(i + 1)));
		}
		return map;
	}

	/**
	 * Returns the {@code calls} of a command in {@code INFO commandstats}; 0 if it has
	 * none.
	 */
	static long calls(String commandStats, String command) {
		for (String line : commandStats.split("\r?\n")) {
			if (line.startsWith("cmdstat_" + command + ":")) {
				return Long.parseLong(line.replaceAll("^cmdstat_[a-z]+:calls=(\\d+),.*", "$1"));
			}
		}
		return 0;
	}

	/**
	 * Waits for the limiter's latest library load (in the background), then checks that
	 * the server lists it.
	 */
	private static void awaitLibrary(RedisRateLimiter limiter, RespClient client) {
		limiter.awaitLibraryLoad(TIMEOUT);
		assertThat(hasLibrary(client)).as("library %s loaded", SCRIPT.libraryName()).isTrue();
	}

	private static boolean hasLibrary(RespClient client) {
		return !((List<?>) client.command("FUNCTION", "LIST", "LIBRARYNAME", SCRIPT.libraryName())).isEmpty();
	}

	private static boolean hasFunctions(RedisServer server) {
		try (RespClient client = server.endpoint().client()) {
			String info = client.text("INFO", "server");
			String version = info.replaceAll("(?s).*redis_version:(\\d+)\\..*", "$1");
			return Integer.parseInt(version) >= 7;
		}
	}

	private static void assumeFunctions(RedisServer server) {
		assumeThat(hasFunctions(server)).as("redis-server 7 or later (functions)").isTrue();
	}

}
