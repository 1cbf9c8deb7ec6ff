package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.stream.Stream;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * The builder's checks throw an {@link InvalidRedisSettingException} that names the
 * setting at fault, so that the starter names the property without reading the message;
 * and they run without Redis on the class path.
 */
class RedisSettingTest {

	/** Never connected: the builder's setters do not touch it. */
	private static final RedisRateLimiter.Builder BUILDER = RedisRateLimiter
		.builder(new LettuceConnectionFactory("localhost", 1));

	@SuppressWarnings("deprecation")
	static Stream<Arguments> invalidSettings() {
		return Stream.of(arguments(RedisSetting.KEY_PREFIX, "", (ThrowingCallable) () -> BUILDER.keyPrefix("")),
				arguments(RedisSetting.KEY_PREFIX, "r{l}", (ThrowingCallable) () -> BUILDER.keyPrefix("r{l}")),
				arguments(RedisSetting.KEY_PREFIX, "r l", (ThrowingCallable) () -> BUILDER.keyPrefix("r l")),
				arguments(RedisSetting.TIMEOUT, Duration.ZERO, (ThrowingCallable) () -> BUILDER.timeout(Duration.ZERO)),
				arguments(RedisSetting.TIMEOUT, Duration.ofMillis(-1),
						(ThrowingCallable) () -> BUILDER.timeout(Duration.ofMillis(-1))),
				arguments(RedisSetting.RESERVOIR, -1L, (ThrowingCallable) () -> BUILDER.reservoir(-1)),
				arguments(RedisSetting.RESERVOIR, -2L, (ThrowingCallable) () -> BUILDER.lease(-2)),
				arguments(RedisSetting.COOL_DOWN, Duration.ofSeconds(-1),
						(ThrowingCallable) () -> BUILDER.coolDown(Duration.ofSeconds(-1))),
				arguments(RedisSetting.RECOVERY_CHECK_INTERVAL, Duration.ZERO,
						(ThrowingCallable) () -> BUILDER.recoveryCheckInterval(Duration.ZERO)));
	}

	@ParameterizedTest(name = "{0} = {1}")
	@MethodSource("invalidSettings")
	void theBuilderNamesTheSettingWhoseValueIsWrong(RedisSetting setting, Object value, ThrowingCallable invalid) {
		InvalidRedisSettingException exception = catchThrowableOfType(InvalidRedisSettingException.class, invalid);
		assertThat(exception.setting()).isEqualTo(setting);
		assertThat(exception.value()).isEqualTo(value);
		assertThat(exception).isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void acceptsTheValuesTheBuilderAccepts() {
		assertThat(RedisSetting.checkKeyPrefix("myapp:rl")).isEqualTo("myapp:rl");
		assertThat(RedisSetting.checkTimeout(Duration.ofMillis(1))).isEqualTo(Duration.ofMillis(1));
		assertThat(RedisSetting.checkReservoir(0)).isZero();
		assertThat(RedisSetting.checkCoolDown(Duration.ZERO)).isZero();
		assertThat(RedisSetting.checkRecoveryCheckInterval(Duration.ofMillis(1))).isEqualTo(Duration.ofMillis(1));
	}

	@Test
	void namesEachSettingAsTheStartersPropertiesDo() {
		assertThat(Stream.of(RedisSetting.KEY_PREFIX, RedisSetting.TIMEOUT, RedisSetting.RESERVOIR)
			.map(RedisSetting::configName)).containsExactly("key-prefix", "timeout", "reservoir");
	}

	@Test
	void checksWithoutRedisOnTheClassPath() throws Exception {
		// the starter checks ratelimit.redis.* with these whatever the backend, also
		// where Spring Data Redis is absent
		ClassLoader withoutRedis = new OurClassesOnly();
		Class<?> settings = withoutRedis.loadClass(RedisSetting.class.getName());
		assertThat(settings.getClassLoader()).isSameAs(withoutRedis);
		for (Method check : new Method[] { settings.getMethod("checkKeyPrefix", String.class),
				settings.getMethod("checkTimeout", Duration.class),
				settings.getMethod("checkReservoir", long.class) }) {
			Object invalid = check.getParameterTypes()[0] == long.class ? -1L
					: (check.getParameterTypes()[0] == String.class) ? "" : Duration.ZERO;
			InvocationTargetException thrown = catchThrowableOfType(InvocationTargetException.class,
					() -> check.invoke(null, invalid));
			assertThat(thrown.getCause().getClass().getName()).isEqualTo(InvalidRedisSettingException.class.getName());
		}
	}

	/**
	 * Loads this project's classes itself, and finds nothing beyond the JDK: no Spring,
	 * no Redis client.
	 */
	private static final class OurClassesOnly extends ClassLoader {

		OurClassesOnly() {
			super(null);
		}

		@Override
		protected Class<?> findClass(String name) throws ClassNotFoundException {
			if (!name.startsWith("dev.ratelimit.")) {
				throw new ClassNotFoundException(name);
			}
			String resource = name.replace('.', '/') + ".class";
			try (InputStream in = RedisSettingTest.class.getClassLoader().getResourceAsStream(resource)) {
				if (in == null) {
					throw new ClassNotFoundException(name);
				}
				byte[] bytes = in.readAllBytes();
				return defineClass(name, bytes, 0, bytes.length);
			}
			catch (IOException ex) {
				throw new ClassNotFoundException(name, ex);
			}
		}

	}

}
