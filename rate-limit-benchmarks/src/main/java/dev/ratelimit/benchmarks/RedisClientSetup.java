package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.EpollProvider;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;

/**
 * A way of deciding calls that {@link RedisDecisionCpu} measures: in memory (the
 * baseline), or in Redis through a connection factory; and the JVM options its
 * measurement runs with.
 */
enum RedisClientSetup {

	/**
	 * No Redis: an {@code InMemoryRateLimiter}, the baseline that the same callers cost.
	 */
	MEMORY("memory") {

		@Override
		Client connect() {
			return new Client(null, () -> {
			});
		}

	},

	/**
	 * Lettuce through a {@code LettuceConnectionFactory} with every default, as Spring
	 * Boot builds it for {@code spring.data.redis.*}.
	 */
	LETTUCE("lettuce") {

		@Override
		Client connect() {
			return lettuce(LettuceClientConfiguration.defaultConfiguration());
		}

		@Override
		List<String> jvmOptions() {
			return NIO;
		}

	},

	/**
	 * As {@link #LETTUCE}, with Netty's native epoll transport on the class path, which
	 * Lettuce then uses.
	 */
	LETTUCE_EPOLL("lettuceEpoll") {

		@Override
		Client connect() {
			if (!EpollProvider.isAvailable()) {
				throw new IllegalStateException("netty-transport-native-epoll is not on the class path");
			}
			return lettuce(LettuceClientConfiguration.defaultConfiguration());
		}

	},

	/** As {@link #LETTUCE}, with one I/O thread and one computation thread. */
	LETTUCE_ONE_IO_THREAD("lettuceOneIoThread") {

		@Override
		Client connect() {
			ClientResources resources = DefaultClientResources.builder()
				.ioThreadPoolSize(1)
				.computationThreadPoolSize(1)
				.build();
			Client client = lettuce(LettuceClientConfiguration.builder().clientResources(resources).build());
			return new Client(client.connectionFactory, () -> {
				client.closer.run();
				resources.shutdown();
			});
		}

		@Override
		List<String> jvmOptions() {
			return NIO;
		}

	},

	/**
	 * As {@link #LETTUCE}, with replies completed on the computation threads rather than
	 * the I/O thread ({@code ClientOptions.publishOnScheduler}).
	 */
	LETTUCE_PUBLISH_ON_SCHEDULER("lettucePublishOnScheduler") {

		@Override
		Client connect() {
			return lettuce(LettuceClientConfiguration.builder()
				.clientOptions(ClientOptions.builder().publishOnScheduler(true).build())
				.build());
		}

		@Override
		List<String> jvmOptions() {
			return NIO;
		}

	},

	/**
	 * Jedis through a {@code JedisConnectionFactory} whose pool has a connection per
	 * caller: each synchronous call on the caller's thread ({@code JedisScriptRunner}).
	 */
	JEDIS("jedis") {

		@Override
		Client connect() {
			JedisConnectionFactory factory = jedis();
			return new Client(factory, factory::destroy);
		}

	},

	/**
	 * As {@link #JEDIS}, but through the generic {@code RedisConnection} API, as any
	 * other blocking client (and Jedis before issue 23): each call handed to a worker
	 * thread, which sends it with EVALSHA.
	 */
	JEDIS_WORKERS("jedisWorkers") {

		@Override
		Client connect() {
			JedisConnectionFactory factory = jedis();
			// not a JedisConnectionFactory to the limiter: the runner of other clients
			RedisConnectionFactory generic = (RedisConnectionFactory) Proxy.newProxyInstance(
					RedisClientSetup.class.getClassLoader(), new Class<?>[] { RedisConnectionFactory.class },
					(proxy, method, arguments) -> {
						try {
							return method.invoke(factory, arguments);
						}
						catch (InvocationTargetException ex) {
							throw ex.getCause();
						}
					});
			return new Client(generic, factory::destroy);
		}

	},

	/**
	 * Not a decision: EVALSHA of {@code return 1} on a Lettuce connection opened as the
	 * limiter opens its own, waited for as the limiter waits, to show what the client
	 * costs without the limiter.
	 */
	LETTUCE_TRIVIAL_SCRIPT("lettuceTrivialScript") {

		@Override
		Client connect() {
			Client factory = lettuce(LettuceClientConfiguration.defaultConfiguration());
			TrivialScript script = TrivialScript.connect((LettuceConnectionFactory) factory.connectionFactory);
			return new Client(factory.connectionFactory, () -> {
				script.close();
				factory.closer.run();
			}) {

				@Override
				Call call(AtomicLong failures) {
					return script::call;
				}

			};
		}

		@Override
		List<String> jvmOptions() {
			return NIO;
		}

	},

	/**
	 * Not a decision: EVALSHA of {@code return 1} on a blocking socket of the caller's
	 * own, read on the caller's thread: the least any client could cost per round trip.
	 */
	SOCKET_TRIVIAL_SCRIPT("socketTrivialScript") {

		@Override
		Client connect() {
			String sha = TrivialScript.load();
			byte[] command = ("*3\r\n$7\r\nEVALSHA\r\n$" + sha.length() + "\r\n" + sha + "\r\n$1\r\n0\r\n")
				.getBytes(StandardCharsets.US_ASCII);
			List<Socket> sockets = new CopyOnWriteArrayList<>();
			ThreadLocal<Socket> socket = ThreadLocal.withInitial(() -> {
				try {
					Socket opened = new Socket("127.0.0.1", RedisSides.port());
					opened.setTcpNoDelay(true);
					sockets.add(opened);
					return opened;
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			});
			return new Client(null, () -> sockets.forEach((s) -> {
				try {
					s.close();
				}
				catch (IOException ex) {
					// closing
				}
			})) {

				@Override
				Call call(AtomicLong failures) {
					return () -> {
						Socket own = socket.get();
						own.getOutputStream().write(command);
						InputStream in = own.getInputStream();
						// ":1\r\n"
						for (int i = 0; i < 4; i++) {
							if (in.read() < 0) {
								throw new IOException("closed");
							}
						}
					};
				}

			};
		}

	};

	/** Keeps Lettuce on Java's NIO transport even where epoll is on the class path. */
	private static final List<String> NIO = List.of("-Dio.lettuce.core.epoll=false");

	private final String name;

	RedisClientSetup(String name) {
		this.name = name;
	}

	abstract Client connect();

	List<String> jvmOptions() {
		return List.of();
	}

	static RedisClientSetup of(String name) {
		for (RedisClientSetup setup : values()) {
			if (setup.name.equals(name)) {
				return setup;
			}
		}
		throw new IllegalArgumentException("unknown client set-up " + name);
	}

	private static Client lettuce(LettuceClientConfiguration configuration) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(standalone(), configuration);
		factory.afterPropertiesSet();
		factory.start();
		return new Client(factory, factory::destroy);
	}

	private static JedisConnectionFactory jedis() {
		GenericObjectPoolConfig<?> pool = new GenericObjectPoolConfig<>();
		pool.setMaxTotal(RedisDecisionCpu.THREADS);
		pool.setMaxIdle(RedisDecisionCpu.THREADS);
		JedisConnectionFactory factory = new JedisConnectionFactory(standalone(),
				JedisClientConfiguration.builder().usePooling().poolConfig(pool).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static RedisStandaloneConfiguration standalone() {
		return new RedisStandaloneConfiguration("127.0.0.1", RedisSides.port());
	}

	/** One synchronous call, as a caller makes it. */
	@FunctionalInterface
	interface Call {

		void run() throws Exception;

	}

	/** A connection factory (none in memory) and what closes it. */
	static class Client implements AutoCloseable {

		final RedisConnectionFactory connectionFactory;

		final Runnable closer;

		private AutoCloseable limiter;

		Client(RedisConnectionFactory connectionFactory, Runnable closer) {
			this.connectionFactory = connectionFactory;
			this.closer = closer;
		}

		/**
		 * Builds the limiter as the starter does (failure mode ALLOW, with a local
		 * fallback charged for every allowed call), ready to decide, and returns a call
		 * that decides one permit of a hot key with it.
		 */
		Call call(AtomicLong failures) {
			InMemoryRateLimiter local = InMemoryRateLimiter.builder().build();
			KeyedLimit limit = new KeyedLimit("api", "client-0",
					Limit.tokenBucket(RedisSides.PER_SECOND + "/1s", RedisSides.PER_SECOND));
			if (this.connectionFactory == null) {
				return () -> local.acquire(limit);
			}
			RedisRateLimiter redis = RedisRateLimiter.builder(this.connectionFactory)
				.keyPrefix("bench-cpu")
				.timeout(Duration.ofSeconds(1))
				.failureMode(FailureMode.ALLOW)
				.localFallback(local)
				.failureListener((ex) -> failures.incrementAndGet())
				.build();
			this.limiter = redis;
			if (!redis.awaitReady(Duration.ofSeconds(10))) {
				throw new IllegalStateException("Redis did not answer on port " + RedisSides.port());
			}
			return () -> redis.acquire(limit);
		}

		@Override
		public void close() throws Exception {
			if (this.limiter != null) {
				this.limiter.close();
			}
			this.closer.run();
		}

	}

}
