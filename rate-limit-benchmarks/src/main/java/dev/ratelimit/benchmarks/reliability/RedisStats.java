package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimit.core.redis.testing.RespClient;

/**
 * What a Redis server says of its clients, read with the harness's own client (not the
 * code under test): {@code INFO commandstats} for the decision script's calls,
 * {@code CLIENT LIST} for its connections.
 */
final class RedisStats {

	/**
	 * The commands that run the decision script: as a Redis 7 function, or as a script.
	 */
	static final Set<String> SCRIPT_COMMANDS = Set.of("fcall", "fcall_ro", "evalsha", "evalsha_ro", "eval", "eval_ro");

	private static final Pattern COMMAND = Pattern
		.compile("^cmdstat_([a-z_|]+):calls=(\\d+)(?:.*?rejected_calls=(\\d+))?", Pattern.MULTILINE);

	private RedisStats() {
	}

	/**
	 * Returns the decision script calls a server has received since it started: executed,
	 * failed or rejected.
	 * @throws RuntimeException if the server does not answer within half a second
	 */
	static long scriptCalls(int port) {
		try (RespClient client = new RespClient("127.0.0.1", port, 500)) {
			return scriptCalls(client.text("INFO", "commandstats"));
		}
	}

	static long scriptCalls(String commandStats) {
		long calls = 0;
		Matcher matcher = COMMAND.matcher(commandStats);
		while (matcher.find()) {
			if (SCRIPT_COMMANDS.contains(matcher.group(1))) {
				calls += Long.parseLong(matcher.group(2));
				if (matcher.group(3) != null) {
					calls += Long.parseLong(matcher.group(3));
				}
			}
		}
		return calls;
	}

	/**
	 * Returns the connections of a server's clients, not counting the one asking.
	 */
	static int clients(int port) {
		try (RespClient client = new RespClient("127.0.0.1", port, 2000)) {
			return (int) client.text("CLIENT", "LIST").lines().filter((line) -> !line.isBlank()).count() - 1;
		}
	}

	/**
	 * Polls a server's script calls every 20 ms until they exceed {@code baseline} by at
	 * least {@code calls}, for at most {@code limit}; a server that does not answer yet
	 * counts as no calls.
	 * @return when it saw them ({@link System#nanoTime()}), or empty if it did not within
	 * the limit
	 */
	static OptionalLong awaitScriptCalls(int port, long baseline, long calls, Duration limit) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() < deadline) {
			long polled = System.nanoTime();
			try {
				if (scriptCalls(port) - baseline >= calls) {
					return OptionalLong.of(polled);
				}
			}
			catch (RuntimeException ex) {
				// not answering yet
			}
			Pause.until(polled + 20_000_000);
		}
		return OptionalLong.empty();
	}

}
