package dev.ratelimit.spring.overrides;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Overrides kept in Redis, shared by every instance and kept across restarts. Each
 * instance answers decisions from its own copy, so a decision makes no extra Redis call.
 * A change is written to a hash ({@code PREFIX:overrides:{overrides}}) and counted in
 * {@code PREFIX:overrides:{overrides}:version}; every instance checks the version twice a
 * second (one small read, whatever the traffic) and reloads its copy when it moved, so a
 * change applies on every instance within a second, also one made while an instance could
 * not reach Redis, as soon as it can again. While Redis cannot be reached, the last copy
 * keeps applying; an instance that starts without Redis starts with none and loads them
 * once Redis answers.
 */
public class RedisLimitOverrides extends InMemoryLimitOverrides implements InitializingBean, DisposableBean {

	private static final Log logger = LogFactory.getLog(RedisLimitOverrides.class);

	private final StringRedisTemplate redis;

	private final String hashKey;

	private final String versionKey;

	private final long checkMillis;

	private final Duration startupWait;

	private final Duration timeout;

	private final ExecutorService calls = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "ratelimit-overrides-call");
		thread.setDaemon(true);
		return thread;
	});

	private static final RedisScript<Long> CHANGE = RedisScript.of("""
			local time = redis.call('TIME')
			if tonumber(time[1]) * 1000000 + tonumber(time[2]) > tonumber(ARGV[1]) then
				return -1
			end
			local removed = 0
			if ARGV[2] == 'put' then
				redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
			else
				removed = redis.call('HDEL', KEYS[1], ARGV[3])
			end
			redis.call('INCR', KEYS[2])
			return removed
			""", Long.class);

	private final Object reloading = new Object();

	private @Nullable ScheduledExecutorService checker;

	private volatile @Nullable String loadedVersion;

	private volatile boolean loaded;

	/**
	 * Creates the store; {@link #afterPropertiesSet()} loads it and starts checking.
	 * @param connectionFactory the Redis connection factory
	 * @param keyPrefix the prefix of every key the library writes
	 * ({@code ratelimit.redis.key-prefix})
	 * @param checkMillis how often the version is checked, in milliseconds (500 in the
	 * starter)
	 * @param startupWait the longest start-up waits for the first load; a Redis that
	 * refuses ends the wait at once, and the overrides then load as soon as it answers
	 * @param timeout the longest a change or a load waits for Redis; a change not
	 * answered in time fails, and never applies later
	 */
	public RedisLimitOverrides(RedisConnectionFactory connectionFactory, String keyPrefix, long checkMillis,
			Duration startupWait, Duration timeout) {
		Objects.requireNonNull(connectionFactory, "connectionFactory must not be null");
		this.redis = new StringRedisTemplate(connectionFactory);
		// one hash tag: the script that changes both runs on one Cluster slot
		this.hashKey = keyPrefix + ":overrides:{overrides}";
		this.versionKey = keyPrefix + ":overrides:{overrides}:version";
		this.checkMillis = checkMillis;
		this.startupWait = Objects.requireNonNull(startupWait, "startupWait must not be null");
		this.timeout = Objects.requireNonNull(timeout, "timeout must not be null");
	}

	/**
	 * Starts checking the version, the first check at once, and waits for the first load
	 * at most the start-up wait, so that an instance that starts while Redis is slow or
	 * gone is not held up by its overrides.
	 */
	@Override
	public void afterPropertiesSet() {
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-overrides");
			thread.setDaemon(true);
			return thread;
		});
		this.checker = executor;
		Future<?> first = executor.submit(this::reloadQuietly);
		executor.scheduleWithFixedDelay(this::checkVersion, this.checkMillis, this.checkMillis, TimeUnit.MILLISECONDS);
		if (this.startupWait.isZero()) {
			return;
		}
		try {
			first.get(this.startupWait.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			logger.warn("Rate-limit overrides did not load from Redis within " + this.startupWait
					+ "; they apply once Redis answers");
		}
		catch (ExecutionException ex) {
			// reloadQuietly logs its own failures
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void destroy() throws Exception {
		ScheduledExecutorService executor = this.checker;
		if (executor != null) {
			executor.shutdownNow();
		}
		this.calls.shutdownNow();
	}

	@Override
	public void put(LimitOverride override) {
		change("put", StoredOverrides.field(override.policy(), override.client()), StoredOverrides.encode(override));
	}

	@Override
	public boolean remove(String policy, String client) {
		return change("remove", StoredOverrides.field(policy, client), "") > 0;
	}

	/**
	 * Writes a change and moves the version, in one script that does nothing once its
	 * deadline (Redis's time when the change was asked, plus the timeout) has passed: a
	 * change that did not answer in time, and was reported as failed, is never applied
	 * later by a command that reached Redis late, such as one queued while the connection
	 * was down.
	 */
	private long change(String operation, String field, String value) {
		long redisNow = timed(() -> this.redis
			.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time(TimeUnit.MICROSECONDS)));
		long deadline = redisNow + TimeUnit.NANOSECONDS.toMicros(this.timeout.toNanos());
		Long result = timed(() -> this.redis.execute(CHANGE, List.of(this.hashKey, this.versionKey),
				Long.toString(deadline), operation, field, value));
		if (result == null || result < 0) {
			throw new QueryTimeoutException("The override change reached Redis after its deadline; nothing changed");
		}
		reload();
		return result;
	}

	private <T> T timed(Supplier<T> call) {
		Future<T> future = this.calls.submit(call::get);
		try {
			return future.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw new QueryTimeoutException("Redis did not answer within " + this.timeout, ex);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException("Interrupted while waiting for Redis", ex);
		}
	}

	/**
	 * Loads every override from Redis into this instance's copy.
	 */
	public void reload() {
		synchronized (this.reloading) {
			String version = timed(() -> this.redis.opsForValue().get(this.versionKey));
			Map<Object, Object> stored = timed(() -> this.redis.opsForHash().entries(this.hashKey));
			List<LimitOverride> overrides = new ArrayList<>(stored.size());
			stored.forEach((field, value) -> {
				try {
					String[] names = StoredOverrides.policyAndClient((String) field);
					overrides.add(StoredOverrides.decode(names[0], names[1], (String) value));
				}
				catch (RuntimeException ex) {
					logger.warn("Ignored the rate-limit override stored under '" + field + "' in " + this.hashKey + ": "
							+ ex.getMessage());
				}
			});
			replaceAll(overrides);
			this.loadedVersion = version;
			this.loaded = true;
		}
	}

	private void reloadQuietly() {
		try {
			reload();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not load rate-limit overrides from Redis; the last copy applies", ex);
		}
	}

	private void checkVersion() {
		try {
			String version = timed(() -> this.redis.opsForValue().get(this.versionKey));
			if (!this.loaded || !Objects.equals(version, this.loadedVersion)) {
				reload();
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Could not check the rate-limit overrides' version in Redis", ex);
		}
	}

}
