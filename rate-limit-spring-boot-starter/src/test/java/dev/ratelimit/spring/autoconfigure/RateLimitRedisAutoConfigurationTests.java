package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.core.redis.RedisRateLimiter;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend's auto-configuration: without a Redis server (start-up does not wait
 * for a Redis that refuses), and with one, which has taken a write before the context is
 * ready.
 */
class RateLimitRedisAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withBean(RedisConnectionFactory.class, () -> new LettuceConnectionFactory("localhost", 1))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s");

	@Test
	void createsARedisRateLimiterWithTheConfiguredFailureModeWhenTheBackendIsRedis() {
		this.runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.on-backend-failure=deny")
			.run((context) -> {
				assertThat(context).hasSingleBean(RedisRateLimiter.class).doesNotHaveBean(InMemoryRateLimiter.class);
				assertThat(context.getBean(RedisRateLimiter.class).failureMode()).isEqualTo(FailureMode.DENY);
			});
	}

	@Test
	void keepsTheInMemoryBackendByDefault() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimiter.class)
			.doesNotHaveBean(RedisRateLimiter.class));
	}

	@Test
	void backsOffForAUserRateLimiter() {
		RateLimiter user = InMemoryRateLimiter.builder().build();
		this.runner.withPropertyValues("ratelimit.backend=redis")
			.withBean("userLimiter", RateLimiter.class, () -> user)
			.run((context) -> assertThat(context).getBean(RateLimiter.class).isSameAs(user));
	}

	@Test
	void failsStartUpForAnInvalidKeyPrefix() {
		this.runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.key-prefix=r{l}")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.redis.key-prefix"));
	}

	@ParameterizedTest(name = "{0} with the {1} backend")
	@CsvSource(delimiter = '|',
			textBlock = """
					ratelimit.redis.timeout=0s       | redis  | ratelimit.redis.timeout    | timeout must be positive (was PT0S)
					ratelimit.redis.timeout=0s       | memory | ratelimit.redis.timeout    | timeout must be positive (was PT0S)
					ratelimit.redis.timeout=-100ms   | redis  | ratelimit.redis.timeout    | timeout must be positive (was PT-0.1S)
					ratelimit.redis.timeout=-100ms   | memory | ratelimit.redis.timeout    | timeout must be positive (was PT-0.1S)
					ratelimit.redis.reservoir=-1     | redis  | ratelimit.redis.reservoir  | reservoir must be 0 (off) or positive (was -1)
					ratelimit.redis.reservoir=-1     | memory | ratelimit.redis.reservoir  | reservoir must be 0 (off) or positive (was -1)
					ratelimit.redis.lease=-1         | redis  | ratelimit.redis.lease      | reservoir must be 0 (off) or positive (was -1); it is the deprecated name of ratelimit.redis.reservoir
					ratelimit.redis.lease=-1         | memory | ratelimit.redis.lease      | reservoir must be 0 (off) or positive (was -1); it is the deprecated name of ratelimit.redis.reservoir
					ratelimit.redis.key-prefix=      | redis  | ratelimit.redis.key-prefix | keyPrefix must not be empty
					ratelimit.redis.key-prefix=      | memory | ratelimit.redis.key-prefix | keyPrefix must not be empty
					ratelimit.redis.key-prefix=r{l}  | redis  | ratelimit.redis.key-prefix | keyPrefix must not contain braces, whitespace or control characters (was 'r{l}')
					ratelimit.redis.key-prefix=r{l}  | memory | ratelimit.redis.key-prefix | keyPrefix must not contain braces, whitespace or control characters (was 'r{l}')
					""")
	void failsStartUpOnceForABadRedisSettingNamingItsPropertyWhateverTheBackend(String setting, String backend,
			String property, String reason) {
		// checked by the Redis backend's own rules, so that a mistake shows before the
		// backend is switched to Redis
		this.runner.withPropertyValues("ratelimit.backend=" + backend, setting).run((context) -> {
			ConfigurationFailures.assertFailure(context, property, reason);
			assertThat(ConfigurationFailures.find(context.getStartupFailure()).getProblems())
				.filteredOn((problem) -> problem.property().equals(property))
				.hasSize(1);
		});
	}

	@Test
	void reportsEveryBadRedisSettingAtOnce() {
		this.runner
			.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.timeout=0s", "ratelimit.redis.reservoir=-1",
					"ratelimit.redis.key-prefix=")
			.run((context) -> assertThat(ConfigurationFailures.find(context.getStartupFailure()).getProblems())
				.extracting(Problem::property)
				.containsExactly("ratelimit.redis.timeout", "ratelimit.redis.reservoir", "ratelimit.redis.key-prefix"));
	}

	@ParameterizedTest(name = "with the {0} backend")
	@ValueSource(strings = { "redis", "memory" })
	void failsStartUpWhenTheReservoirAndItsDeprecatedNameDisagreeNamingBoth(String backend) {
		this.runner
			.withPropertyValues("ratelimit.backend=" + backend, "ratelimit.redis.reservoir=20",
					"ratelimit.redis.lease=10")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.redis.reservoir",
					"is 20 but ratelimit.redis.lease, its deprecated name, is 10; remove ratelimit.redis.lease"));
	}

	@Test
	void startsWhenTheReservoirAndItsDeprecatedNameAgree() {
		this.runner
			.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.reservoir=20", "ratelimit.redis.lease=20")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(RedisRateLimiter.class));
	}

	@Test
	void failsStartUpForANegativeStartupTimeout() {
		this.runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.startup-timeout=-1s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.redis.startup-timeout"));
	}

	@Test
	void startsWithoutWaitingForARedisThatRefusesAndFollowsTheFailureMode() {
		this.runner
			.withPropertyValues("ratelimit.backend=redis", "ratelimit.on-backend-failure=deny",
					"ratelimit.redis.startup-timeout=1h")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RedisRateLimiter limiter = context.getBean(RedisRateLimiter.class);
				assertThat(limiter.isAvailable()).isFalse();
				assertThat(limiter.acquire(new KeyedLimit("api", "k", Limit.tokenBucket("5/1s"))).source())
					.isEqualTo(Decision.Source.FAILED_CLOSED);
			});
	}

	@Test
	void redisHasTakenTheLimitersFirstWriteBeforeTheApplicationIsReady() {
		try (RedisServer server = RedisServer.start(); RespClient redis = server.endpoint().client()) {
			new ApplicationContextRunner()
				.withConfiguration(
						AutoConfigurations.of(RateLimitRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
				.withBean(RedisConnectionFactory.class, () -> server.endpoint().lettuce())
				.withPropertyValues("ratelimit.backend=redis", "ratelimit.policies.api.limits[0].rate=5/1s")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					// no call decided yet: start-up itself connected, loaded the script
					// and wrote through it
					String stats = redis.text("INFO", "commandstats");
					assertThat(scriptCalls(stats)).isPositive();
					assertThat(context.getBean(RedisRateLimiter.class).isAvailable()).isTrue();
				});
		}
	}

	private static long scriptCalls(String commandStats) {
		long calls = 0;
		for (String line : commandStats.split("\\R")) {
			if (line.startsWith("cmdstat_fcall:") || line.startsWith("cmdstat_evalsha:")
					|| line.startsWith("cmdstat_eval:")) {
				calls += Long.parseLong(line.replaceAll("^[^:]+:calls=(\\d+),.*", "$1"));
			}
		}
		return calls;
	}

}
