package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * The settings of a {@link RedisRateLimiter} that a value can be wrong for, each with the
 * name configuration gives it, and the checks that {@link RedisRateLimiter.Builder}
 * applies to them. The checks need no Redis on the class path: configuration runs them
 * whatever its backend, without building a limiter.
 */
public enum RedisSetting {

	/** The text every key starts with. */
	KEY_PREFIX("key-prefix"),

	/** The longest a decision waits for Redis. */
	TIMEOUT("timeout"),

	/**
	 * The permits a token bucket takes from Redis per call into a reservoir in two-tier
	 * mode.
	 */
	RESERVOIR("reservoir"),

	/** How long calls are decided locally after Redis answered late. */
	COOL_DOWN("cool-down"),

	/** How often a Redis that is down is checked. */
	RECOVERY_CHECK_INTERVAL("recovery-check-interval");

	private final String configName;

	RedisSetting(String configName) {
		this.configName = configName;
	}

	/**
	 * Returns the name of this setting in configuration, such as {@code key-prefix}.
	 * @return the configuration name
	 */
	public String configName() {
		return this.configName;
	}

	@Override
	public String toString() {
		return this.configName;
	}

	/**
	 * Checks a key prefix: not empty, and without braces, which would change the Redis
	 * Cluster hash tag, whitespace or control characters.
	 * @param prefix the prefix
	 * @return the prefix
	 * @throws InvalidRedisSettingException for {@link #KEY_PREFIX} if the prefix is not
	 * one
	 */
	public static String checkKeyPrefix(String prefix) {
		Objects.requireNonNull(prefix, "keyPrefix must not be null");
		if (prefix.isEmpty()) {
			throw new InvalidRedisSettingException(KEY_PREFIX, prefix, "keyPrefix must not be empty");
		}
		for (int i = 0; i < prefix.length(); i++) {
			char c = prefix.charAt(i);
			if (c == '{' || c == '}' || Character.isWhitespace(c) || Character.isISOControl(c)) {
				throw new InvalidRedisSettingException(KEY_PREFIX, prefix,
						"keyPrefix must not contain braces, whitespace or control characters (was '" + prefix
								+ "'); braces would change the Redis Cluster hash tag");
			}
		}
		return prefix;
	}

	/**
	 * Checks a timeout: positive.
	 * @param timeout the timeout
	 * @return the timeout
	 * @throws InvalidRedisSettingException for {@link #TIMEOUT} if it is zero or negative
	 */
	public static Duration checkTimeout(Duration timeout) {
		Objects.requireNonNull(timeout, "timeout must not be null");
		if (timeout.isNegative() || timeout.isZero()) {
			throw new InvalidRedisSettingException(TIMEOUT, timeout, "timeout must be positive (was " + timeout + ")");
		}
		return timeout;
	}

	/**
	 * Checks a reservoir size: 0 (no reservoir) or more.
	 * @param size the reservoir size
	 * @return the reservoir size
	 * @throws InvalidRedisSettingException for {@link #RESERVOIR} if it is negative
	 */
	public static long checkReservoir(long size) {
		if (size < 0) {
			throw new InvalidRedisSettingException(RESERVOIR, size,
					"reservoir must be 0 (off) or positive (was " + size + ")");
		}
		return size;
	}

	/**
	 * Checks a cool-down: zero or positive.
	 * @param coolDown the cool-down
	 * @return the cool-down
	 * @throws InvalidRedisSettingException for {@link #COOL_DOWN} if it is negative
	 */
	public static Duration checkCoolDown(Duration coolDown) {
		Objects.requireNonNull(coolDown, "coolDown must not be null");
		if (coolDown.isNegative()) {
			throw new InvalidRedisSettingException(COOL_DOWN, coolDown,
					"coolDown must not be negative (was " + coolDown + ")");
		}
		return coolDown;
	}

	/**
	 * Checks the interval of recovery checks: positive.
	 * @param interval the interval
	 * @return the interval
	 * @throws InvalidRedisSettingException for {@link #RECOVERY_CHECK_INTERVAL} if it is
	 * zero or negative
	 */
	public static Duration checkRecoveryCheckInterval(Duration interval) {
		Objects.requireNonNull(interval, "recoveryCheckInterval must not be null");
		if (interval.isNegative() || interval.isZero()) {
			throw new InvalidRedisSettingException(RECOVERY_CHECK_INTERVAL, interval,
					"recoveryCheckInterval must be positive (was " + interval + ")");
		}
		return interval;
	}

}
