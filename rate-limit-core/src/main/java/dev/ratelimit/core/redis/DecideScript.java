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
 * The decision script {@code decide.lua} in the two forms Redis runs, both built from the
 * one resource: a script for EVALSHA and EVAL, and a Redis 7 function library for
 * FUNCTION LOAD and FCALL. The resource's top level only defines things; its entry point
 * is {@code decide(keys, argv)}.
 */
final class DecideScript {

	private static final String RESOURCE = "dev/ratelimit/core/redis/decide.lua";

	/*
	 * The library is the resource under a "#!lua name=ratelimit_HASH" line, with a tail
	 * that registers decide as the function ratelimit_decide_HASH. HASH is the start of
	 * the script's SHA-1, so each version of the script has its own library and function:
	 * two versions of an application (a rolling deploy) each call their own, and loading
	 * one never replaces the other. A script rebuilds every helper on each call; a
	 * library builds them once, when loaded, which makes a call a few microseconds
	 * cheaper on the server.
	 */

	/** Length of the script's SHA-1 prefix in the library's and the function's names. */
	private static final int HASH_LENGTH = 12;

	/*
	 * The script is the resource with this tail, which calls redis.replicate_commands()
	 * where it exists (before Redis 5) and returns decide(KEYS, ARGV).
	 *
	 * The globals KEYS and ARGV that EVAL sets are read through _G: the resource declares
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
	 * Reads {@code decide.lua} from the class path.
	 * @return the script in both forms
	 */
	static DecideScript load() {
		ClassPathResource resource = new ClassPathResource(RESOURCE, DecideScript.class.getClassLoader());
		try (InputStream in = resource.getInputStream()) {
			return new DecideScript(StreamUtils.copyToString(in, StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + RESOURCE, ex);
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
