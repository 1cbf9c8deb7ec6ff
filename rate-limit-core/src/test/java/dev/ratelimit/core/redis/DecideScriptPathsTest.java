package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisExtension;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code decide.lua} decides a call of one token bucket acquiring on a path of its own,
 * without the tables of the general path. This replays random calls (costs from 0 to
 * above capacity, a clock that also goes back, fresh keys of buckets that start below
 * capacity, with and without a TTL floor) through both paths in one script run, on two
 * keys that start alike, and requires the same reply and the same commands, argument for
 * argument: the same fields written, the same {@code PEXPIRE} in milliseconds or the same
 * {@code DEL}. Comparing the commands rather than the keys' TTLs afterwards keeps Redis's
 * real clock out of the comparison.
 */
@ExtendWith(RedisExtension.class)
class DecideScriptPathsTest {

	private static final int STEPS = 300;

	/** The line of {@code decide} that sends a call to the one-token-bucket path. */
	private static final String FAST_PATH_DISPATCH = "if op == 'a' and #KEYS == 1 and ARGV[FIRST_KEY_ARG] == 'tb' then";

	/*
	 * Two copies of decide.lua in one chunk, behind a local 'redis' that logs every
	 * command the copies make (with the key written as <key>): the first copy with the
	 * dispatch to the fast path disabled and its entry point renamed generalDecide, the
	 * second as it is. The tail keeps the two keys alike, should Redis have expired one
	 * and not the other between two runs (their TTLs are equal, but set a few
	 * microseconds apart), runs both, and returns { fast reply, general reply, fast
	 * commands, general commands }.
	 */
	private static final String HEAD = """
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

	private static final String TAIL = """

			local argv = _G.ARGV
			if realRedis.call('EXISTS', testKeys[1]) ~= realRedis.call('EXISTS', testKeys[2]) then
				realRedis.call('DEL', testKeys[1], testKeys[2])
			end
			commandLog = {}
			local fast = decide({ testKeys[1] }, argv)
			local fastCommands = commandLog
			commandLog = {}
			local general = generalDecide({ testKeys[2] }, argv)
			local generalCommands = commandLog
			commandLog = nil
			return { fast, general, fastCommands, generalCommands }
			""";

	static Stream<Limit> tokenBuckets() {
		return Stream.of(Limit.tokenBucket("5/1s", 10), Limit.tokenBucket("1/10s"), Limit.tokenBucket("7/300ms", 3),
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("3/1s").capacity(6).initial(1).build(),
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("2/1s").capacity(4).initial(0).build(),
				Limit.tokenBucket("1000/1m"), Limit.tokenBucket("1/1s"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("tokenBuckets")
	void oneTokenBucketIsDecidedAndWrittenExactlyAsByTheGeneralPath(Limit limit, RedisEndpoint endpoint) {
		String body = DecideScript.load().library();
		body = body.substring(body.indexOf('\n') + 1, body.lastIndexOf("redis.register_function"));
		assertThat(body).as("decide.lua's dispatch to the one-token-bucket path").containsOnlyOnce(FAST_PATH_DISPATCH);
		assertThat(body).as("decide.lua's entry point").containsOnlyOnce("local function decide(");
		String general = body.replace(FAST_PATH_DISPATCH, "if false then")
			.replace("local function decide(", "local function generalDecide(");
		String script = HEAD + general + "\n" + body + TAIL;
		Random random = new Random(limit.fingerprint().hashCode());
		String prefix = TestRedis.uniquePrefix();
		String fastKey = prefix + ":{k}:fast";
		String generalKey = prefix + ":{k}:general";
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
					client.command("DEL", fastKey, generalKey);
				}
				long cost = switch (random.nextInt(5)) {
					case 0 -> 0;
					case 1 -> limit.capacity() + 1 + random.nextInt(2);
					default -> 1 + random.nextLong(limit.capacity());
				};
				String ttlFloor = (random.nextInt(4) == 0) ? "3600000" : "0";
				List<String> args = new ArrayList<>(
						List.of("EVALSHA", sha, "2", fastKey, generalKey, "a", Long.toString(cost), Long.toString(now),
								ttlFloor, "0", "tb", Long.toString(limit.unitsPerMicro()),
								Long.toString(limit.unitsPerPermit()), Long.toString(limit.capacity()),
								Long.toString(limit.initial()), "0", Long.toString(limit.maxWaitMicros()),
								Long.toString(window), Long.toString(limit.retentionMicros()), ""));
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
		if (limit.retentionMicros() == window) {
			assertThat(deletes).as("calls that leave a full bucket, as good as fresh, so delete the key").isPositive();
		}
		if (limit.initial() < limit.capacity()) {
			assertThat(firstSightWrites).as("rejected first calls of a bucket that starts below capacity").isPositive();
		}
	}

}
