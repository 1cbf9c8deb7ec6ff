package dev.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.command.CommandFailedEvent;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.event.command.CommandSucceededEvent;

import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.RedisRateLimiter;

/**
 * The Redis-backed limiters the Redis benchmarks compare, each behind the same one-call
 * interface: decide one permit for a key, synchronously, and answer whether it is
 * allowed.
 */
final class RedisSides {

	/*
	 * Fairness: every side gets one multiplexed Lettuce connection to the same server
	 * (ours and Spring Cloud Gateway through a Spring Data LettuceConnectionFactory with
	 * its default shared native connection, Bucket4j through a RedisClient connection as
	 * its documentation shows), the same limit (a token bucket of PER_SECOND per second
	 * with a burst of one second's refill, so nearly every call is allowed), and the same
	 * JMH threads, one blocking call per thread at a time. The trivial script, which is
	 * no limiter, gets a connection of the factory's client as ours does (ours opens one
	 * of its own), and waits for each reply as ours does. The server is started by run.sh
	 * and found through BENCH_REDIS_PORT.
	 */

	/** A rate far above what a server can decide: every call is allowed. */
	static final long PER_SECOND = 1_000_000_000L;

	/** The lease size of ours in lease (two-tier) mode. */
	static final long LEASE = 100;

	/** One limiter, as a benchmark calls it. */
	interface Side extends AutoCloseable {

		boolean decide(String key);

		/**
		 * Commands this side's client has sent to Redis so far (Lettuce command
		 * listener).
		 */
		long commandsSent();

		/**
		 * Runs EVALSHA of {@code return 1}, the trivial script, for a side that is no
		 * limiter ({@link RedisInFlight64#trivialScript()}).
		 */
		default long trivialScript() throws Exception {
			throw new UnsupportedOperationException("not the trivial script's side");
		}

		@Override
		void close();

	}

	private RedisSides() {
	}

	static int port() {
		String port = System.getenv("BENCH_REDIS_PORT");
		if (port == null || port.isBlank()) {
			throw new IllegalStateException("BENCH_REDIS_PORT is not set: run the Redis benchmarks through "
					+ "rate-limit-benchmarks/run.sh, which starts a redis-server of its own");
		}
		return Integer.parseInt(port.strip());
	}

	static Side of(String name) {
		return switch (name) {
			case "ours" -> ours(Limit.tokenBucket(PER_SECOND + "/1s", PER_SECOND), 0, "bench-tb");
			case "oursSlidingWindow" -> ours(Limit.slidingWindowCounter(PER_SECOND + "/1s"), 0, "bench-swc");
			case "oursLease" -> ours(Limit.tokenBucket(PER_SECOND + "/1s", PER_SECOND), LEASE, "bench-lease");
			case "bucket4jLettuce" -> bucket4j();
			case "springCloudGateway" -> springCloudGateway();
			case "trivialScript" -> trivialScript();
			default -> throw new IllegalArgumentException("unknown side " + name);
		};
	}

	private static LettuceConnectionFactory connectionFactory(CommandCounter counter) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port()));
		factory.afterPropertiesSet();
		factory.start();
		((io.lettuce.core.AbstractRedisClient) factory.getNativeClient()).addListener(counter);
		return factory;
	}

	private static Side ours(Limit limit, long lease, String prefix) {
		CommandCounter counter = new CommandCounter();
		LettuceConnectionFactory factory = connectionFactory(counter);
		AtomicLong failures = new AtomicLong();
		RedisRateLimiter.Builder builder = RedisRateLimiter.builder(factory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(5))
			.failureMode(FailureMode.DENY)
			.failureListener((ex) -> failures.incrementAndGet());
		if (lease > 0) {
			builder.reservoir(lease);
		}
		RedisRateLimiter limiter = builder.build();
		return new Side() {

			@Override
			public boolean decide(String key) {
				return limiter.acquire(new KeyedLimit("api", key, limit)).isAllowed();
			}

			@Override
			public long commandsSent() {
				return counter.sent.get();
			}

			@Override
			public void close() {
				limiter.close();
				factory.destroy();
				if (failures.get() > 0) {
					System.err.println("WARNING: ours (" + prefix + ") saw " + failures.get() + " Redis failures");
				}
			}

		};
	}

	private static Side bucket4j() {
		CommandCounter counter = new CommandCounter();
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port()));
		client.addListener(counter);
		StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
		ProxyManager<byte[]> proxyManager = Bucket4jLettuce.casBasedBuilder(connection).build();
		BucketConfiguration configuration = BucketConfiguration.builder().addLimit(Path.ALLOWED.bandwidth()).build();
		return new Side() {

			@Override
			public boolean decide(String key) {
				byte[] redisKey = ("bench-b4j:" + key).getBytes(StandardCharsets.UTF_8);
				return proxyManager.builder().build(redisKey, () -> configuration).tryConsume(1);
			}

			@Override
			public long commandsSent() {
				return counter.sent.get();
			}

			@Override
			public void close() {
				connection.close();
				client.shutdown();
			}

		};
	}

	@SuppressWarnings({ "unchecked", "rawtypes" })
	private static Side springCloudGateway() {
		CommandCounter counter = new CommandCounter();
		LettuceConnectionFactory factory = connectionFactory(counter);
		ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(factory);
		// The script as Spring Cloud Gateway publishes it in its jar, loaded as its
		// auto-configuration loads it.
		RedisScript<List<Long>> script = (RedisScript) RedisScript
			.of(new ClassPathResource("META-INF/scripts/request_rate_limiter.lua"), List.class);
		GenericApplicationContext context = new GenericApplicationContext();
		context.registerBean("redisRequestRateLimiterScript", RedisScript.class, () -> script);
		context.refresh();
		ConfigurationService configurationService = new ConfigurationService(context.getBeanFactory(),
				DefaultConversionService::getSharedInstance, () -> null);
		org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter limiter = new org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter(
				template, script, configurationService);
		limiter.getConfig()
			.put("bench",
					new org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter.Config()
						.setReplenishRate(Math.toIntExact(PER_SECOND))
						.setBurstCapacity(PER_SECOND));
		limiter.setApplicationContext(context);
		return new Side() {

			@Override
			public boolean decide(String key) {
				Response response = limiter.isAllowed("bench", key).block();
				return response != null && response.isAllowed();
			}

			@Override
			public long commandsSent() {
				return counter.sent.get();
			}

			@Override
			public void close() {
				context.close();
				factory.destroy();
			}

		};
	}

	private static Side trivialScript() {
		CommandCounter counter = new CommandCounter();
		LettuceConnectionFactory factory = connectionFactory(counter);
		TrivialScript script = TrivialScript.connect(factory);
		return new Side() {

			@Override
			public boolean decide(String key) {
				throw new UnsupportedOperationException("the trivial script decides nothing");
			}

			@Override
			public long trivialScript() throws Exception {
				return script.call();
			}

			@Override
			public long commandsSent() {
				return counter.sent.get();
			}

			@Override
			public void close() {
				script.close();
				factory.destroy();
			}

		};
	}

	/** Counts the commands a Lettuce client sends (each one a request and its reply). */
	static final class CommandCounter implements CommandListener {

		final AtomicLong sent = new AtomicLong();

		@Override
		public void commandStarted(CommandStartedEvent event) {
			this.sent.incrementAndGet();
		}

		@Override
		public void commandSucceeded(CommandSucceededEvent event) {
		}

		@Override
		public void commandFailed(CommandFailedEvent event) {
		}

	}

}
