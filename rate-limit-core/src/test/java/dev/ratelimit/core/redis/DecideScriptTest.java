package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.internal.algorithm.LimitAlgorithm;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.RespClient;
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
 * defined once, so that no algorithm's math has a second copy. And the one thing the
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
					int(limit.retention), limit.member, rawequal(limit, previous) and 1 or 0 })
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

	@Test
	void readsALimitAgainWhenAnyOfItsArgumentsChanges(RedisEndpoint endpoint) {
		List<String> base = List.of("lb", "3", "200000", "5", "2", "1", "250000", "400000", "600000", "lease-1");
		List<List<String>> calls = new ArrayList<>();
		calls.add(base);
		calls.add(changed(base, ScriptArguments.PER_KEY - 1, "lease-2"));
		for (int k = 0; k < ScriptArguments.PER_KEY - 1; k++) {
			String other = switch (k) {
				case 0 -> "tb";
				case 5 -> "0";
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
