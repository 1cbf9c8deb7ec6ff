package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.StreamUtils;

/**
 * The decision script in the two forms Redis runs, both built from one text assembled
 * from the Lua sources in {@code lua/}: a script for EVALSHA and EVAL, and a Redis 7
 * function library for FUNCTION LOAD and FCALL. The text's top level only defines things;
 * its entry point is {@code decide(keys, argv)}, in {@code decide.lua}.
 */
final class DecideScript {

	private static final String DIRECTORY = "dev/ratelimit/core/redis/lua/";

	/*
	 * The order matters: a Lua local is visible only below its definition, so each part
	 * uses only what the parts before it define. The prelude holds the protocol's header
	 * (ScriptOperationTest reads its list of operations) and the helpers; each algorithm
	 * comes after the state layout it shares with another; decide.lua, last, dispatches
	 * to all of them.
	 */

	/** The Lua sources in {@code lua/}, in the order they are assembled. */
	static final List<String> PARTS = List.of("prelude.lua", "bucket_state.lua", "token_bucket.lua", "leaky_bucket.lua",
			"window_state.lua", "fixed_window.lua", "sliding_window_counter.lua", "sliding_window_log.lua",
			"concurrency_limit.lua", "penalties.lua", "carried_shares.lua", "decide.lua");

	/*
	 * The library is the assembled text under a "#!lua name=ratelimit_HASH" line, with a
	 * tail that registers decide as the function ratelimit_decide_HASH. HASH is the start
	 * of the script's SHA-1, so each version of the script has its own library and
	 * function: two versions of an application (a rolling deploy) each call their own,
	 * and loading one never replaces the other. A script rebuilds every helper on each
	 * call; a library builds them once, when loaded, which makes a call a few
	 * microseconds cheaper on the server.
	 */

	/** Length of the script's SHA-1 prefix in the library's and the function's names. */
	private static final int HASH_LENGTH = 12;

	/*
	 * The script is the assembled text with this tail, which calls
	 * redis.replicate_commands() where it exists (before Redis 5) and returns
	 * decide(KEYS, ARGV).
	 *
	 * The globals KEYS and ARGV that EVAL sets are read through _G: the prelude declares
	 * locals of the same names (which decide assigns on each call), and they shadow the
	 * globals in the rest of the chunk.
	 */
	private static final String SCRIPT_TAIL = """

			if redis.replicate_commands then
				-- Needed only before Redis 5 (effects replication is the default since then): scripts that read TIME must
				-- replicate their effects, not themselves. Not allowed, and not needed, in a function library.
				redis.replicate_commands()
			end
			return decide(_G.KEYS, _G.ARGV)
			""";

	@SuppressWarnings("rawtypes")
	private final RedisScript<List> script;

	private final String libraryName;

	private final String functionName;

	private final String library;

	DecideScript(String body) {
		this.script = RedisScript.of(body + SCRIPT_TAIL, List.class);
		String hash = this.script.getSha1().substring(0, HASH_LENGTH);
		this.libraryName = "ratelimit_" + hash;
		this.functionName = "ratelimit_decide_" + hash;
		this.library = "#!lua name=" + this.libraryName + "\n" + body + "\nredis.register_function('"
				+ this.functionName + "', decide)\n";
	}

	/**
	 * Reads and assembles the script's parts from the class path.
	 * @return the script in both forms
	 */
	static DecideScript load() {
		return new DecideScript(assemble());
	}

	/**
	 * Returns the text of the script's {@link #PARTS}, in order, one blank line apart.
	 * @return the assembled text
	 */
	static String assemble() {
		StringBuilder text = new StringBuilder();
		for (String part : PARTS) {
			if (!text.isEmpty()) {
				text.append('\n');
			}
			text.append(read(DIRECTORY + part));
		}
		return text.toString();
	}

	private static String read(String path) {
		ClassPathResource resource = new ClassPathResource(path, DecideScript.class.getClassLoader());
		try (InputStream in = resource.getInputStream()) {
			return StreamUtils.copyToString(in, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + path, ex);
		}
	}

	/**
	 * Returns the script for EVALSHA and EVAL, with its SHA-1.
	 * @return the script
	 */
	RedisScript<?> script() {
		return this.script;
	}

	/**
	 * Returns the name of the function library, {@code ratelimit_HASH}.
	 * @return the library name
	 */
	String libraryName() {
		return this.libraryName;
	}

	/**
	 * Returns the name of the function that FCALL calls, {@code ratelimit_decide_HASH}.
	 * @return the function name
	 */
	String functionName() {
		return this.functionName;
	}

	/**
	 * Returns the library's source for FUNCTION LOAD, starting with its
	 * {@code #!lua name=} line.
	 * @return the library
	 */
	String library() {
		return this.library;
	}

}
