package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The script's sliding window log on the server: the work of a call does not grow with
 * the log (counted in Redis commands and in the members they return, never timed),
 * running totals may wrap around, and a give-back leaves the log as if the permits had
 * never been taken.
 */
@ExtendWith(RedisExtension.class)
class SlidingLogScriptTest {

	/** 2026-01-01T00:00Z in microseconds. */
	private static final long START = 1_767_225_600_000_000L;

	/** Calls per script run of a fill, so that no run holds the server for long. */
	private static final int FILL_CHUNK = 2_000;

	/** sliding_window_log.lua's LOG_TOTAL_MODULUS. */
	private static final long TOTAL_MODULUS = 1L << 50;

	/** sliding_window_log.lua's LOG_TRIM_PER_CALL. */
	private static final int TRIM_PER_CALL = 8;

	/*
	 * The script behind a local 'redis' that counts the commands decide makes and the
	 * elements of their replies while 'counting' is on. ARGV[1] is the mode: 'fill'
	 * (ARGV[2] calls taking one permit each, one a microsecond from the time in decide's
	 * ARGV) or 'call' (one decide, which returns { decide's reply, commands, elements });
	 * decide's own ARGV follows.
	 */
	private static final String HEAD = """
			local realRedis = redis
			local counting = false
			local commands = 0
			local elements = 0
			local redis = setmetatable({
				call = function(...)
					local result = realRedis.call(...)
					if counting then
						commands = commands + 1
						if type(result) == 'table' then
							elements = elements + #result
						end
					end
					return result
				end,
			}, { __index = realRedis })
			""";

	private static final String TAIL = """

			local mode = _G.ARGV[1]
			local args = {}
			for i = 2, #_G.ARGV do
				args[i - 1] = _G.ARGV[i]
			end
			if mode == 'fill' then
				local count = tonumber(table.remove(args, 1))
				local start = tonumber(args[3])
				for i = 0, count - 1 do
					args[3] = string.format('%.0f', start + i)
					if decide(_G.KEYS, args)[2] ~= 1 then
						return realRedis.error_reply('call ' .. i .. ' of the fill was rejected')
					end
				end
				return count
			end
			counting = true
			local reply = decide(_G.KEYS, args)
			counting = false
			return { reply, commands, elements }
			""";

	@ParameterizedTest(name = "{0} entries")
	@ValueSource(ints = { 1_000, 100_000 })
	void aCallOnAFullLogTakesLogarithmicallyManyCommandsAndMembers(int entries, RedisEndpoint endpoint) {
		// one permit a microsecond over a window of as many microseconds: full
		Limit limit = Limit.slidingWindowLog(entries + "/" + entries + "us");
		String key = TestRedis.uniquePrefix() + ":{log}:swl";
		long log2 = 32 - Integer.numberOfLeadingZeros(entries - 1);
		try (RespClient client = endpoint.client()) {
			String sha = client.text("SCRIPT", "LOAD", script());
			fill(client, sha, key, limit, entries, START);
			long newest = START + entries - 1;

			// ZRANGE -1 -1, ZRANGEBYSCORE LIMIT 0 1, ZCOUNT, ZCARD, no probe (the oldest
			// entry frees enough), ZRANGE
			Call full = call(client, sha, key, "a", limit, 1, newest, "");
			assertThat(full.allowed()).isFalse();
			assertThat(full.retryAfter()).isEqualTo(1);
			assertThat(full.elements()).as("members read").isEqualTo(3);
			assertThat(full.commands()).as("commands").isEqualTo(5);

			// 60% of the entries have left the window, none removed yet, and the call
			// needs 30% of the log gone: a
			// binary search of at most log2(n) probes
			long later = newest + entries * 6L / 10;
			Call rejected = call(client, sha, key, "a", limit, entries * 9L / 10, later, "");
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.remaining()).isEqualTo(entries * 6L / 10);
			assertThat(rejected.retryAfter()).isEqualTo(entries * 3L / 10);
			assertThat(rejected.elements()).as("members read").isLessThanOrEqualTo(3 + log2);
			assertThat(rejected.commands()).as("commands").isLessThanOrEqualTo(5 + log2);

			// ZRANGE, ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYRANK of 8, ZADD, PEXPIRE
			Call allowed = call(client, sha, key, "a", limit, 1, later, "");
			assertThat(allowed.allowed()).isTrue();
			assertThat(allowed.elements()).as("members read").isEqualTo(2);
			assertThat(allowed.commands()).as("commands").isEqualTo(6);
			assertThat(client.number("ZCARD", key)).isEqualTo(entries - TRIM_PER_CALL + 1);
			client.command("DEL", key);
		}
	}

	@Test
	void runningTotalsThatWrapAroundDecideAsTotalsFromZero(RedisEndpoint endpoint) {
		Limit limit = Limit.slidingWindowLog("20/1s");
		String prefix = TestRedis.uniquePrefix();
		String fromZero = prefix + ":{log}:zero";
		String wrapping = prefix + ":{log}:wrapping";
		Random random = new Random(11);
		try (RespClient client = endpoint.client()) {
			String sha = client.text("SCRIPT", "LOAD", script());
			// an entry long out of the window, whose running total the next entry
			// continues from
			long old = START - 10 * limit.windowMicros();
			client.command("ZADD", wrapping, Long.toString(old), old + ":" + (TOTAL_MODULUS - 25) + ":1");
			long now = START;
			for (int i = 0; i < 500; i++) {
				now += random.nextLong(100_000);
				// never 0, which may leave the log empty and so start its totals from
				// zero again
				long cost = 1 + random.nextLong(21);
				String op = (random.nextInt(5) == 0) ? "e" : "a";
				Call expected = call(client, sha, fromZero, op, limit, cost, now, "");
				Call actual = call(client, sha, wrapping, op, limit, cost, now, "");
				assertThat(actual.reply()).as("call %d", i).isEqualTo(expected.reply());
			}
			long zero = newestTotal(client, fromZero);
			assertThat(zero).as("the running total from zero").isGreaterThan(25);
			assertThat(newestTotal(client, wrapping)).as("the running total went past the modulus")
				.isEqualTo(zero - 25);
			client.command("DEL", fromZero, wrapping);
		}
	}

	@Test
	void aGiveBackLeavesTheLogAsIfThePermitsHadNeverBeenTaken(RedisEndpoint endpoint) {
		Limit limit = Limit.slidingWindowLog("10/1s");
		String prefix = TestRedis.uniquePrefix();
		try (RespClient client = endpoint.client()) {
			String sha = client.text("SCRIPT", "LOAD", script());
			for (long givenBack : new long[] { 1, 3 }) {
				String refunded = prefix + ":{log}:refunded-" + givenBack;
				String untouched = prefix + ":{log}:untouched-" + givenBack;
				// 3 permits at START, given back in part or in whole after two later
				// calls took theirs
				assertThat(call(client, sha, refunded, "a", limit, 3, START, "").allowed()).isTrue();
				if (givenBack < 3) {
					call(client, sha, untouched, "a", limit, 3 - givenBack, START, "");
				}
				for (String key : List.of(refunded, untouched)) {
					call(client, sha, key, "a", limit, 2, START + 100, "");
					call(client, sha, key, "a", limit, 1, START + 200, "");
				}
				call(client, sha, refunded, "r", limit, givenBack, START + 250, Long.toString(START));
				assertThat(client.command("ZRANGE", refunded, "0", "-1", "WITHSCORES"))
					.isEqualTo(client.command("ZRANGE", untouched, "0", "-1", "WITHSCORES"));
				assertThat(client.number("PTTL", refunded)).isPositive();
				long now = START + 300;
				for (long cost = 0; cost <= 11; cost++) {
					assertThat(call(client, sha, refunded, "e", limit, cost, now, "").reply())
						.isEqualTo(call(client, sha, untouched, "e", limit, cost, now, "").reply());
				}
				client.command("DEL", refunded, untouched);
			}
		}
	}

	private static String script() {
		String body = DecideScript.load().library();
		body = body.substring(body.indexOf('\n') + 1, body.lastIndexOf("redis.register_function"));
		return HEAD + body + TAIL;
	}

	private static void fill(RespClient client, String sha, String key, Limit limit, int entries, long start) {
		for (int done = 0; done < entries; done += FILL_CHUNK) {
			int count = Math.min(FILL_CHUNK, entries - done);
			List<String> command = new ArrayList<>(List.of("EVALSHA", sha, "1", key, "fill", Integer.toString(count)));
			command.addAll(decideArguments("a", limit, 1, start + done, ""));
			client.command(command.toArray(String[]::new));
		}
	}

	private static Call call(RespClient client, String sha, String key, String op, Limit limit, long cost, long now,
			String mark) {
		List<String> command = new ArrayList<>(List.of("EVALSHA", sha, "1", key, "call"));
		command.addAll(decideArguments(op, limit, cost, now, mark));
		List<?> result = (List<?>) client.command(command.toArray(String[]::new));
		return new Call((List<?>) result.get(0), (Long) result.get(1), (Long) result.get(2));
	}

	/**
	 * decide's ARGV for one sliding log at an explicit time, with a TTL floor of an hour
	 * (the time is not Redis's).
	 */
	private static List<String> decideArguments(String op, Limit limit, long cost, long now, String mark) {
		return List.of(op, Long.toString(cost), Long.toString(now), "3600000", "0", "swl",
				Long.toString(limit.unitsPerMicro()), Long.toString(limit.unitsPerPermit()),
				Long.toString(limit.capacity()), Long.toString(limit.initial()), "0",
				Long.toString(limit.maxWaitMicros()), Long.toString(limit.windowMicros()),
				Long.toString(limit.retentionMicros()), "0", "0", "", mark);
	}

	private static long newestTotal(RespClient client, String key) {
		String member = (String) ((List<?>) client.command("ZRANGE", key, "-1", "-1")).get(0);
		return Long.parseLong(member.split(":")[1]);
	}

	/**
	 * One decide: its reply, the commands it made and the elements their replies held.
	 */
	private record Call(List<?> reply, long commands, long elements) {

		boolean allowed() {
			return (Long) this.reply.get(2) == 1;
		}

		long remaining() {
			return (Long) this.reply.get(3);
		}

		long retryAfter() {
			return (Long) this.reply.get(4);
		}

	}

}
