package dev.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * EVALSHA of the script {@code return 1}, the least a script call can ask of Redis, on a
 * Lettuce connection opened as {@code RedisRateLimiter} opens its own (through the
 * factory's client, with the byte-array codec) and waited for as it waits (the
 * asynchronous API, then a timed get on the caller's thread).
 */
final class TrivialScript implements AutoCloseable {

	static final String SCRIPT = "return 1";

	private static final byte[][] NO_KEYS = new byte[0][];

	private final StatefulRedisConnection<byte[], byte[]> connection;

	private final RedisAsyncCommands<byte[], byte[]> commands;

	private final String sha;

	private TrivialScript(StatefulRedisConnection<byte[], byte[]> connection, String sha) {
		this.connection = connection;
		this.commands = connection.async();
		this.sha = sha;
	}

	static TrivialScript connect(LettuceConnectionFactory factory) {
		StatefulRedisConnection<byte[], byte[]> connection = ((RedisClient) factory.getNativeClient())
			.connect(ByteArrayCodec.INSTANCE);
		String sha = connection.sync().scriptLoad(SCRIPT.getBytes(StandardCharsets.UTF_8));
		return new TrivialScript(connection, sha);
	}

	/** Loads the script on the benchmark's server; returns its SHA-1. */
	static String load() {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", RedisSides.port()));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return connection.sync().scriptLoad(SCRIPT);
		}
		finally {
			client.shutdown();
		}
	}

	long call() throws Exception {
		Long one = this.commands.<Long>evalsha(this.sha, ScriptOutputType.INTEGER, NO_KEYS).get(5, TimeUnit.SECONDS);
		return one;
	}

	@Override
	public void close() {
		this.connection.close();
	}

}
