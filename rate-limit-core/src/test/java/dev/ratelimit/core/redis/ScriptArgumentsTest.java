package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.WindowAlignment;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ScriptArguments}.
 */
class ScriptArgumentsTest {

	@Test
	void sendsTheHeaderThenThirteenValuesPerKey() {
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
		assertThat(args.get(5 + 9)).isEqualTo("0");
		assertThat(args.get(5 + 10)).isEqualTo("0");
		assertThat(args.get(5 + 11)).isEmpty();
		assertThat(args.get(18)).isEqualTo("cc");
		assertThat(args.get(30)).isEqualTo("lease-1");
	}

	@Test
	void sendsEachLimitWithAPenaltyThePlaceOfItsPolicysPenaltyKeyAfterTheStateKeys() {
		Limit penalized = Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("5/1m")
			.penalty(java.time.Duration.ofMinutes(15))
			.build();
		KeyedLimit window = new KeyedLimit("login", "alice", penalized);
		KeyedLimit plain = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1s"));
		KeyedLimit burst = new KeyedLimit("login", "alice", "burst", penalized);
		RedisKeys redisKeys = new RedisKeys("rl");
		SlotPlan plan = new SlotPlan(List.of(window, plain, burst), redisKeys);
		int[] group = { 0, 1, 2 };
		assertThat(plan.keys(group)).containsExactly(redisKeys.key(window), redisKeys.key(plain), redisKeys.key(burst),
				"rl:{login:" + RedisKeys.hash("alice") + "}:penalty");
		assertThat(RedisKeys.slot(redisKeys.penaltyKey(window))).isEqualTo(RedisKeys.slot(redisKeys.key(window)));
		List<String> args = new ScriptArguments(0)
			.of(ScriptOperation.ACQUIRE, plan, group, new String[] { "", "", "" }, 1, 0, "")
			.stream()
			.map((arg) -> new String(arg, StandardCharsets.UTF_8))
			.toList();
		assertThat(args.get(5 + 9)).isEqualTo("900000000");
		assertThat(args.get(5 + 10)).isEqualTo("4");
		assertThat(args.get(5 + 13 + 9)).isEqualTo("0");
		assertThat(args.get(5 + 13 + 10)).isEqualTo("0");
		assertThat(args.get(5 + 26 + 10)).isEqualTo("4");
	}

	@Test
	void sendsACalendarWindowTheStartsOfFourWindowsAroundTheTimeOfTheDecision() {
		Limit monthly = Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("100/1mo")
			.align(WindowAlignment.CALENDAR)
			.zone("Europe/Paris")
			.build();
		SlotPlan plan = new SlotPlan(List.of(new KeyedLimit("api", "alice", monthly)), new RedisKeys("rl"));
		long time = micros("2028-02-15T12:00:00+01:00");
		String window = new String(new ScriptArguments(0, new ManualTimeSource(0))
			.of(ScriptOperation.ACQUIRE, plan, new int[] { 0 }, new String[] { "" }, 1, 0, Long.toString(time))
			.get(5 + 7), StandardCharsets.UTF_8);
		assertThat(window)
			.isEqualTo("Europe/Paris|" + micros("2028-01-01T00:00:00+01:00") + "," + micros("2028-02-01T00:00:00+01:00")
					+ "," + micros("2028-03-01T00:00:00+01:00") + "," + micros("2028-04-01T00:00:00+02:00"));
		String byRedisTime = new String(new ScriptArguments(0, new ManualTimeSource(time))
			.of(ScriptOperation.ACQUIRE, plan, new int[] { 0 }, new String[] { "" }, 1, 0, "")
			.get(5 + 7), StandardCharsets.UTF_8);
		assertThat(byRedisTime).as("around the application's time when the script reads Redis TIME").isEqualTo(window);
	}

	private static long micros(String offsetDateTime) {
		return OffsetDateTime.parse(offsetDateTime).toEpochSecond() * 1_000_000L;
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
