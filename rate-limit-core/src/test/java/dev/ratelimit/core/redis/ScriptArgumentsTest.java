package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ScriptArguments}.
 */
class ScriptArgumentsTest {

	@Test
	void sendsTheHeaderThenTenValuesPerKey() {
		KeyedLimit bucket = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1s", 20));
		KeyedLimit inFlight = new KeyedLimit("api", "alice", Limit.concurrency(3));
		SlotPlan plan = new SlotPlan(List.of(bucket, inFlight), new RedisKeys("rl"));
		List<String> args = new ScriptArguments(3_600_000)
			.of(ScriptOperation.ACQUIRE, plan, new int[] { 0, 1 }, new String[] { "", "lease-1" }, 2, 0, "")
			.stream()
			.map((arg) -> new String(arg, StandardCharsets.UTF_8))
			.toList();
		assertThat(ScriptArguments.PER_KEY).isEqualTo(scriptConstant("ARGS_PER_KEY"));
		assertThat(args).hasSize(scriptConstant("FIRST_KEY_ARG") - 1 + 2 * ScriptArguments.PER_KEY);
		assertThat(args.subList(0, 5)).containsExactly("a", "2", "", "3600000", "0");
		assertThat(args.get(5)).isEqualTo("tb");
		assertThat(args.get(5 + 3)).isEqualTo("20");
		assertThat(args.get(15)).isEqualTo("cc");
		assertThat(args.get(24)).isEqualTo("lease-1");
	}

	@Test
	void givesEachAlgorithmItsOwnCode() {
		assertThat(Arrays.stream(Algorithm.values()).map(ScriptArguments::code)).doesNotHaveDuplicates()
			.containsExactlyInAnyOrder("tb", "lb", "fw", "swl", "swc", "cc");
	}

	private static int scriptConstant(String name) {
		Matcher matcher = Pattern.compile("(?m)^local " + name + " = (\\d+)$").matcher(DecideScript.assemble());
		assertThat(matcher.find()).as("the script declares %s", name).isTrue();
		return Integer.parseInt(matcher.group(1));
	}

}
