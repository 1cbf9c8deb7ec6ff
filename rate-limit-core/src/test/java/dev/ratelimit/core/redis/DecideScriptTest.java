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
import dev.ratelimit.core.algorithm.LimitAlgorithm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The script as {@link DecideScript} assembles it from its Lua sources: every source
 * once, in order; each algorithm in the source named after its Java class; every function
 * defined once, so that no algorithm's math has a second copy.
 */
class DecideScriptTest {

	private static final String DIRECTORY = "dev/ratelimit/core/redis/lua/";

	/**
	 * A function definition: {@code local function name(} or
	 * {@code function Table.name(}.
	 */
	private static final Pattern DEFINITION = Pattern.compile("(?m)^(?:local )?function ([\\w.]+)\\(");

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
