package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.internal.algorithm.LimitAlgorithm;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The script as {@link DecideScript} assembles it from its Lua sources: every source
 * once, in order; each algorithm in the source named after its Java class; every function
 * defined once, so that no algorithm's math has a second copy. The one-key way through
 * {@code decide} decides and writes exactly as its loops do, and the one thing the
 * function library keeps from call to call, a limit read from the arguments, is read
 * again as soon as any of its arguments changes.
 */
@ExtendWith(RedisExtension.class)
class DecideScriptTest {

	private static final String DIRECTORY = "dev/ratelimit/core/redis/lua/";

	/**
	 * A function definition: {@code local function name(} or
	 * {@code function Table.name(}.
	 */
	private static final Pattern DEFINITION = Pattern.compile("(?m)^(?:local )?function ([\\w.]+)\\(");

	private static final int STEPS = 300;

	/**
	 * The line of {@code decide} that sends one key acquiring to {@code acquireOneKey}.
	 */
	private static final String ONE_KEY_DISPATCH = "if op == 'a' and keyCount == 1 and ARGV[FIRST_KEY_ARG + 9] == '0' and ARGV[FIRST_KEY_ARG + 11] == '' then";

	/*
	 * Two copies of the script in one chunk, behind a local 'redis' that logs every
	 * command the copies make (with the key written as <key>): the first copy with the
	 * dispatch to acquireOneKey disabled and its entry point renamed decideByTheLoops,
	 * the second as it is. RUN_BOTH keeps the two keys alike, should Redis have expired
	 * one and not the other between two runs (their TTLs are equal, but set a few
	 * microseconds apart), runs both, and returns { one-key reply, loops' reply, one-key
	 * commands, loops' commands }. Comparing the commands rather than the keys' TTLs
	 * afterwards keeps Redis's real clock out of the comparison.
	 */
	private static final String LOG_COMMANDS = """
			local realRedis = redis
			local commandLog = nil
			local testKeys = _G.KEYS
			local redis = setmetatable({
				call = function(...)
					if commandLog then
						local words = {}
						for i, arg in ipairs({ ... }) do
							if arg == testKeys[1] or arg == testKeys[2] then
								words[i] = '<key>'
							else
								words[i] = tostring(arg)
							end
						end
						table.insert(commandLog, table.concat(words, ' '))
					end
					return realRedis.call(...)
				end,
			}, { __index = realRedis })
			""";

	private static final String RUN_BOTH = """

			local argv = _G.ARGV
			if realRedis.call('EXISTS', testKeys[1]) ~= realRedis.call('EXISTS', testKeys[2]) then
				realRedis.call('DEL', testKeys[1], testKeys[2])
			end
			commandLog = {}
			local oneKey = decide({ testKeys[1] }, argv)
			local oneKeyCommands = commandLog
			commandLog = {}
			local loops = decideByTheLoops({ testKeys[2] }, argv)
			local loopsCommands = commandLog
			commandLog = nil
			return { oneKey, loops, oneKeyCommands, loopsCommands }
			""";

	/*
	 * Appended to the assembled text, in the same chunk, so that it sees the prelude's
	 * locals: _G.ARGV holds the arguments of key 1 of one call after another
	 * (ARGS_PER_KEY values each); for each call it sets ARGV as decide would, reads the
	 * limit with limitAt(1), and returns its fields, then 1 if limitAt returned the same
	 * table as for the call before, else 0.
	 */
	private static final String READ_LIMITS = """

			local calls = {}
			local previous = nil
			for start = 1, #_G.ARGV, ARGS_PER_KEY do
				ARGV = {}
				for k = 0, ARGS_PER_KEY - 1 do
					ARGV[FIRST_KEY_ARG + k] = _G.ARGV[start + k]
				end
				local limit = limitAt(1)
				table.insert(calls, { limit.algorithm, int(limit.perMicro), int(limit.perPermit), int(limit.capacity),
					int(limit.initial), limit.shape and '1' or '0', int(limit.maxWait), int(limit.window),
					int(limit.retention), int(limit.penalty), int(limit.penaltyKey), limit.carry, limit.member,
					rawequal(limit, previous) and 1 or 0 })
				previous = limit
			end
			return calls
			""";

	@Test
	void assemblesEveryLuaSourceOnceAndInOrder() throws IOException {
		Resource[] sources = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:" + DIRECTORY + "*.lua");
		assertThat(Arrays.stream(sources).map(Resource::getFilename)).as("the Lua sources")
			.containsExactlyInAnyOrderElementsOf(DecideScript.PARTS);
		String text = DecideScript.assemble();
		int end = 0;
		for (String part : DecideScript.PARTS) {
			String source = source(part);
			int start = text.indexOf(source, end);
			assertThat(start).as("%s, after the parts before it", part).isGreaterThanOrEqualTo(end);
			assertThat(text.indexOf(source, start + 1)).as("%s a second time", part).isNegative();
			end = start + source.length();
		}
		assertThat(end).isEqualTo(text.length());
	}

	@Test
	void definesEveryFunctionOnce() {
		Map<String, Long> definitions = definitions(DecideScript.assemble())
			.collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
		assertThat(definitions).containsKeys("TokenBucket.refill", "TokenBucket.evaluate", "TokenBucket.apply",
				"limitAt", "decide");
		assertThat(definitions).allSatisfy((name, count) -> assertThat(count).as(name).isOne());
	}

	static Stream<Limit> oneLimitPerAlgorithm() {
		return RedisDifferentialTest.limits()
			.collect(Collectors.toMap(Limit::algorithm, Function.identity(), (first, other) -> first))
			.values()
			.stream();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("oneLimitPerAlgorithm")
	void eachAlgorithmIsTheSourceNamedAfterItsJavaClass(Limit limit) {
		String javaClass = LimitAlgorithm.of(limit).getClass().getSimpleName();
		String part = javaClass.replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT) + ".lua";
		assertThat(DecideScript.PARTS).contains(part);
		String source = source(part);
		assertThat(source).containsOnlyOnce("local " + javaClass + " = {}");
		List<String> functions = definitions(DecideScript.assemble()).filter((name) -> name.startsWith(javaClass + "."))
			.toList();
		assertThat(functions).contains(javaClass + ".load", javaClass + ".evaluate", javaClass + ".apply",
				javaClass + ".refund");
		assertThat(definitions(source)).as("the functions of %s defined in %s", javaClass, part).containsAll(functions);
		assertThat(source("decide.lua")).as("the dispatch of %s", limit.algorithm())
			.containsOnlyOnce("\t" + ScriptArguments.code(limit.algorithm()) + " = " + javaClass + ",\n");
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("dev.ratelimit.core.redis.RedisDifferentialTest#limits")
	void oneKeyAcquiringIsDecidedAndWrittenExactlyAsByTheLoops(Limit limit, RedisEndpoint endpoint) {
		String body = DecideScript.load().library();
		body = body.substring(body.indexOf('\n') + 1, body.lastIndexOf("redis.register_function"));
		assertThat(body).as("decide's dispatch to acquireOneKey").containsOnlyOnce(ONE_KEY_DISPATCH);
		assertThat(body).as("the entry point").containsOnlyOnce("local function decide(");
		String loops = body.replace(ONE_KEY_DISPATCH, "if false then")
			.replace("local function decide(", "local function decideByTheLoops(");
		String script = LOG_COMMANDS + loops + "\n" + body + RUN_BOTH;
		Random random = new Random(limit.toString().hashCode());
		String prefix = TestRedis.uniquePrefix();
		String oneKey = prefix + ":{k}:one";
		String loopsKey = prefix + ":{k}:loops";
		SlotPlan plan = new SlotPlan(List.of(new KeyedLimit("p", "k", limit)), new RedisKeys(prefix));
		long now = 1_700_000_000_000_000L + random.nextInt(1_000_000_000);
		long window = limit.windowMicros();
		int allowed = 0;
		int rejected = 0;
		int overCapacity = 0;
		int deletes = 0;
		int firstSightWrites = 0;
		try (RespClient client = endpoint.client()) {
			String sha = client.text("SCRIPT", "LOAD", script);
			for (int step = 0; step < STEPS; step++) {
				now += switch (random.nextInt(6)) {
					case 0 -> 0;
					case 1 -> random.nextInt(1_000);
					case 2 -> random.nextLong(window + 1);
					case 3 -> random.nextLong(3 * limit.retentionMicros() + 1);
					case 4 -> -random.nextLong(window / 2 + 1);
					default -> -random.nextInt(1_000);
				};
				if (random.nextInt(25) == 0) {
					client.command("DEL", oneKey, loopsKey);
				}
				long cost = switch (random.nextInt(5)) {
					case 0 -> 0;
					case 1 -> limit.capacity() + 1 + random.nextInt(2);
					default -> 1 + random.nextLong(limit.capacity());
				};
				long ttlFloor = (random.nextInt(4) == 0) ? 3_600_000 : 0;
				List<String> args = new ArrayList<>(List.of("EVALSHA", sha, "2", oneKey, loopsKey));
				new ScriptArguments(ttlFloor)
					.of(ScriptOperation.ACQUIRE, plan, new int[] { 0 }, new String[] { "lease-" + step }, cost, 0,
							Long.toString(now))
					.forEach((arg) -> args.add(new String(arg, StandardCharsets.UTF_8)));
				List<?> both = (List<?>) client.command(args.toArray(String[]::new));
				String context = "step " + step + " of " + limit + ": " + args.subList(5, 10);
				assertThat(both).as(context).hasSize(4);
				assertThat(both.get(0)).as(context + ", reply").isEqualTo(both.get(1));
				assertThat(both.get(2)).as(context + ", commands").isEqualTo(both.get(3));
				List<?> reply = (List<?>) both.get(0);
				List<?> commands = (List<?>) both.get(2);
				if ((Long) reply.get(2) == 1) {
					allowed++;
				}
				else {
					rejected++;
					if (commands.stream().anyMatch((command) -> ((String) command).startsWith("HSET"))) {
						firstSightWrites++;
					}
				}
				if ((Long) reply.get(7) == 1) {
					overCapacity++;
				}
				if (commands.stream().anyMatch((command) -> ((String) command).startsWith("DEL"))) {
					deletes++;
				}
			}
		}
		assertThat(allowed).as("allowed calls").isPositive();
		assertThat(rejected).as("rejected calls").isPositive();
		assertThat(overCapacity).as("calls above capacity").isPositive();
		if (limit.algorithm() == Algorithm.TOKEN_BUCKET && limit.retentionMicros() == window) {
			assertThat(deletes).as("calls that leave a full bucket, as good as fresh, so delete the key").isPositive();
		}
		if (limit.algorithm() == Algorithm.TOKEN_BUCKET && limit.initial() < limit.capacity()) {
			assertThat(firstSightWrites).as("rejected first calls of a bucket that starts below capacity").isPositive();
		}
	}

	@Test
	void readsALimitAgainWhenAnyOfItsArgumentsChanges(RedisEndpoint endpoint) {
		List<String> base = List.of("lb", "3", "200000", "5", "2", "1", "250000", "400000", "600000", "900000", "2", "",
				"lease-1");
		List<List<String>> calls = new ArrayList<>();
		calls.add(base);
		calls.add(changed(base, ScriptArguments.PER_KEY - 1, "lease-2"));
		for (int k = 0; k < ScriptArguments.PER_KEY - 1; k++) {
			String other = switch (k) {
				case 0 -> "tb";
				case 5 -> "0";
				case 11 -> "3;4 tb 1 1 10 10 0 -1 10 10 0 0";
				default -> Long.toString(Long.parseLong(base.get(k)) + 1);
			};
			calls.add(changed(base, k, other));
			calls.add(base);
		}
		List<String> command = new ArrayList<>(List.of("EVAL", DecideScript.assemble() + READ_LIMITS, "0"));
		calls.forEach(command::addAll);
		List<?> read;
		try (RespClient client = endpoint.client()) {
			read = (List<?>) client.command(command.toArray(String[]::new));
		}
		assertThat(read).hasSameSizeAs(calls);
		for (int i = 0; i < calls.size(); i++) {
			List<?> limit = (List<?>) read.get(i);
			assertThat(limit.subList(0, ScriptArguments.PER_KEY)).as("call %d: %s", i, calls.get(i))
				.isEqualTo(calls.get(i));
			boolean sameLimit = i > 0 && calls.get(i)
				.subList(0, ScriptArguments.PER_KEY - 1)
				.equals(calls.get(i - 1).subList(0, ScriptArguments.PER_KEY - 1));
			assertThat(limit.get(ScriptArguments.PER_KEY)).as("call %d kept the limit of the call before", i)
				.isEqualTo(sameLimit ? 1L : 0L);
		}
	}

	/*
	 * Appended to the assembled text: _G.ARGV holds triples a, b, c; returns
	 * mulDivCeil(a, b, c) of each.
	 */
	private static final String MUL_DIV_CEIL = """

			local quotients = {}
			for i = 1, #_G.ARGV, 3 do
				table.insert(quotients, mulDivCeil(tonumber(_G.ARGV[i]), tonumber(_G.ARGV[i + 1]), tonumber(_G.ARGV[i + 2])))
			end
			return quotients
			""";

	@Test
	void takesASharesPermitsOverExactlyAsJavaDoes(RedisEndpoint endpoint) {
		long big = (1L << 53) - 1;
		List<long[]> triples = new ArrayList<>(List.of(new long[] { 0, 1000, 60 }, new long[] { 45, 1000, 60 },
				new long[] { 60, 1000, 60 }, new long[] { 2, 5, 3 }, new long[] { big, big, big },
				new long[] { big - 1, big, big }, new long[] { 1, big, big }, new long[] { 3, big, 4 }));
		Random random = new Random(53);
		while (triples.size() < 600) {
			long c = 1 + random.nextLong(big);
			long b = 1 + ((triples.size() % 2 == 0) ? random.nextLong(big) : random.nextLong(1_000_000));
			triples.add(new long[] { random.nextLong(c + 1), b, c });
		}
		List<String> command = new ArrayList<>(List.of("EVAL", DecideScript.assemble() + MUL_DIV_CEIL, "0"));
		triples.forEach((triple) -> {
			for (long value : triple) {
				command.add(Long.toString(value));
			}
		});
		List<?> quotients;
		try (RespClient client = endpoint.client()) {
			quotients = (List<?>) client.command(command.toArray(String[]::new));
		}
		assertThat(quotients).hasSameSizeAs(triples);
		for (int i = 0; i < triples.size(); i++) {
			long[] t = triples.get(i);
			assertThat(quotients.get(i)).as("%d * %d / %d", t[0], t[1], t[2])
				.isEqualTo(LimitAlgorithm.mulDivCeil(t[0], t[1], t[2]));
		}
	}

	private static List<String> changed(List<String> arguments, int index, String value) {
		List<String> changed = new ArrayList<>(arguments);
		changed.set(index, value);
		return changed;
	}

	private static Stream<String> definitions(String text) {
		Matcher matcher = DEFINITION.matcher(text);
		List<String> names = new ArrayList<>();
		while (matcher.find()) {
			names.add(matcher.group(1));
		}
		return names.stream();
	}

	private static String source(String part) {
		try (InputStream in = DecideScriptTest.class.getClassLoader().getResourceAsStream(DIRECTORY + part)) {
			assertThat(in).as(part).isNotNull();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
