package dev.ratelimit.core.redis.testing;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * The Redis shared by the tests of one JVM: the URL in the environment variable
 * {@value #ENVIRONMENT_VARIABLE} if it is set, else one {@link RedisServer} started on
 * first use (from {@code redis-server} on the {@code PATH} or the embedded binary) and
 * killed when the JVM exits. Tests keep apart by key prefix ({@link #uniquePrefix()}),
 * never by flushing, since the server may be shared.
 */
public final class TestRedis {

	/**
	 * The environment variable with the URL of an existing Redis, such as
	 * {@code redis://localhost:6380}.
	 */
	public static final String ENVIRONMENT_VARIABLE = "RATELIMIT_TEST_REDIS";

	private static @Nullable RedisEndpoint shared;

	private TestRedis() {
	}

	/**
	 * Returns the shared standalone Redis, starting it if needed.
	 * @return the endpoint
	 */
	public static synchronized RedisEndpoint standalone() {
		if (shared == null) {
			String url = System.getenv(ENVIRONMENT_VARIABLE);
			if (url != null && !url.isBlank()) {
				shared = RedisEndpoint.parse(url);
			}
			else {
				shared = RedisServer.start().endpoint();
			}
		}
		return shared;
	}

	/**
	 * Returns whether the shared Redis is an external one named by
	 * {@value #ENVIRONMENT_VARIABLE}.
	 * @return whether it is external
	 */
	public static boolean isExternal() {
		String url = System.getenv(ENVIRONMENT_VARIABLE);
		return url != null && !url.isBlank();
	}

	/**
	 * Returns a key prefix no other test uses.
	 * @return the prefix
	 */
	public static String uniquePrefix() {
		return "rlt-" + UUID.randomUUID().toString().substring(0, 8);
	}

}
