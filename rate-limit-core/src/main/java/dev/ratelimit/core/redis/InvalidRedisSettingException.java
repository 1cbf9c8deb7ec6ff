package dev.ratelimit.core.redis;

/**
 * Thrown when a {@link RedisRateLimiter.Builder} is given a value it cannot take. It
 * names the {@link RedisSetting}, so that a caller can point at it (configuration names
 * its property) without reading the message, which is for people.
 */
public final class InvalidRedisSettingException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final RedisSetting setting;

	private final transient Object value;

	InvalidRedisSettingException(RedisSetting setting, Object value, String message) {
		super(message);
		this.setting = setting;
		this.value = value;
	}

	/**
	 * Returns the setting whose value is wrong.
	 * @return the setting
	 */
	public RedisSetting setting() {
		return this.setting;
	}

	/**
	 * Returns the value that was refused, as it was given (a {@code String} prefix, a
	 * {@code Duration}, a {@code Long} lease).
	 * @return the value
	 */
	public Object value() {
		return this.value;
	}

}
