package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.WindowAlignment;
import dev.ratelimit.core.internal.algorithm.CalendarWindow;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The application computes a calendar window's boundaries, as Lua knows no time zones,
 * but Redis's clock still decides: the script picks, among the boundaries sent around the
 * application's time, the window that holds Redis {@code TIME}. The application's clock
 * here is set a minute to one side of a boundary and Redis's real clock is on the other;
 * the zone is a fixed offset chosen so that a midnight falls there.
 */
class CalendarWindowClockTest {

	private static final long MINUTE = 60_000_000L;

	private static final long DAY = 86_400_000_000L;

	private static LettuceConnectionFactory connectionFactory;

	private static ScriptRunner runner;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.standalone().lettuce();
		runner = ScriptRunner.of(connectionFactory, DecideScript.load());
	}

	@AfterAll
	static void disconnect() {
		runner.close();
		connectionFactory.destroy();
	}

	@Test
	void redisPastTheBoundaryCountsInTheNewWindowThoughTheApplicationIsBeforeIt() throws Exception {
		long boundary = redisTime() - MINUTE;
		Limit daily = dailyWithMidnightAt(boundary);
		ScriptReply.KeyOutcome outcome = acquire(daily, new ManualTimeSource(boundary - MINUTE));
		assertThat(outcome.allowed()).isTrue();
		assertThat(outcome.mark()).as("the window counted in starts at the boundary").isEqualTo(boundary);
		assertThat(outcome.resetAfterMicros()).as("a day from the boundary, not the application's minute")
			.isGreaterThan(DAY - 2 * MINUTE)
			.isLessThanOrEqualTo(DAY - MINUTE);
	}

	@Test
	void redisBeforeTheBoundaryCountsInTheOldWindowThoughTheApplicationIsPastIt() throws Exception {
		long boundary = redisTime() + MINUTE;
		Limit daily = dailyWithMidnightAt(boundary);
		ScriptReply.KeyOutcome outcome = acquire(daily, new ManualTimeSource(boundary + MINUTE));
		assertThat(outcome.allowed()).isTrue();
		assertThat(outcome.mark()).as("the window that ends at the boundary").isEqualTo(boundary - DAY);
		assertThat(outcome.resetAfterMicros()).as("until the boundary, by Redis's clock")
			.isPositive()
			.isLessThanOrEqualTo(MINUTE);
	}

	@Test
	void refusesToDecideWhenTheClocksAreFurtherApartThanTheWindowsSent() throws Exception {
		long now = redisTime();
		Limit daily = dailyWithMidnightAt(now - MINUTE);
		ManualTimeSource threeDaysBehind = new ManualTimeSource(now - 3 * DAY);
		assertThat(CalendarWindow.around(daily, threeDaysBehind.nowMicros())[3]).isLessThan(now);
		assertThatException().isThrownBy(() -> acquire(daily, threeDaysBehind))
			.withStackTraceContaining("is outside the windows the application sent");
	}

	/**
	 * A calendar day in a fixed offset whose midnight falls at the given whole second.
	 */
	private static Limit dailyWithMidnightAt(long micros) {
		long seconds = Math.floorDiv(micros, 1_000_000L);
		assertThat(seconds * 1_000_000L).isEqualTo(micros);
		int offset = (int) Math.floorMod(-seconds, 86_400L);
		if (offset > 18 * 3600) {
			offset -= 86_400;
		}
		return Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("10/1d")
			.align(WindowAlignment.CALENDAR)
			.zone(ZoneOffset.ofTotalSeconds(offset))
			.build();
	}

	/** Redis's time, to the whole second. */
	private static long redisTime() {
		try (RespClient client = TestRedis.standalone().client()) {
			List<?> time = (List<?>) client.command("TIME");
			return Long.parseLong((String) time.get(0)) * 1_000_000L;
		}
	}

	/**
	 * One acquire on a fresh key, by Redis TIME, with boundaries from the given clock.
	 */
	private static ScriptReply.KeyOutcome acquire(Limit limit, ManualTimeSource applicationClock) throws Exception {
		KeyedLimit target = new KeyedLimit("quota", "alice", limit);
		SlotPlan plan = new SlotPlan(List.of(target), new RedisKeys(TestRedis.uniquePrefix()));
		List<byte[]> args = new ScriptArguments(0, applicationClock).of(ScriptOperation.ACQUIRE, plan, new int[] { 0 },
				new String[] { "" }, 1, 0, "");
		List<Object> reply = runner.eval(List.of(plan.key(0).getBytes(StandardCharsets.UTF_8)), args,
				System.nanoTime() + 5_000_000_000L);
		return ScriptReply.decode(reply, 1).outcomes().get(0);
	}

}
