package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Four limiter instances, each with its own connection factory (as four application
 * instances), hammer one key from several threads: together they allow exactly what one
 * instance would, not four times as much.
 */
class RedisFleetTest {

	private static final List<LettuceConnectionFactory> factories = new ArrayList<>();

	@BeforeAll
	static void connect() {
		for (int i = 0; i < 4; i++) {
			factories.add(TestRedis.standalone().lettuce());
		}
	}

	@AfterAll
	static void disconnect() {
		factories.forEach(LettuceConnectionFactory::destroy);
	}

	static Stream<Arguments> limits() {
		return Stream.of(Arguments.of(Limit.tokenBucket("100/1h"), 100), Arguments.of(Limit.leakyBucket("50/1h"), 50),
				Arguments.of(Limit.slidingWindowLog("60/1h"), 60), Arguments.of(Limit.concurrency(25), 25));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void fourInstancesTogetherAllowExactlyTheLimit(Limit limit, int bound) throws Exception {
		List<RedisRateLimiter> fleet = fleet(TestRedis.uniquePrefix());
		try {
			KeyedLimit target = new KeyedLimit("shared", "one-key", limit);
			int[] allowed = FleetSupport.hammer(fleet, 2, 3 * bound, (attempt) -> List.of(target), 1, (attempt) -> 0);
			assertThat(allowed[0]).isEqualTo(bound);
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("limits")
	void fourInstancesTogetherAllowExactlyTheTighterOfTwoLimits(Limit limit, int bound) throws Exception {
		List<RedisRateLimiter> fleet = fleet(TestRedis.uniquePrefix());
		try {
			List<KeyedLimit> limits = List.of(new KeyedLimit("per-client", "one-key", limit),
					new KeyedLimit("global", "", Limit.tokenBucket("1000/1h")));
			int[] allowed = FleetSupport.hammer(fleet, 2, 3 * bound, (attempt) -> limits, 1, (attempt) -> 0);
			assertThat(allowed[0]).isEqualTo(bound);
			assertThat(fleet.get(0).inspect(List.of(limits.get(1))).get(0).remaining()).isEqualTo(1000 - bound);
		}
		finally {
			fleet.forEach(RedisRateLimiter::close);
		}
	}

	private static List<RedisRateLimiter> fleet(String prefix) {
		return factories.stream()
			.map((factory) -> RedisRateLimiter.builder(factory)
				.keyPrefix(prefix)
				.timeout(Duration.ofSeconds(5))
				.build())
			.toList();
	}

}
