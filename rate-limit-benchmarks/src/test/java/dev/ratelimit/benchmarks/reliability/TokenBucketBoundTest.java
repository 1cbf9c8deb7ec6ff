package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bound of a client's admissions from the limit's configuration: capacity + rate × t,
 * and the stated bound with Redis restarts and local fallbacks.
 */
class TokenBucketBoundTest {

	private static final TokenBucketBound SIX_A_MINUTE = new TokenBucketBound(6, 6, Duration.ofMinutes(1));

	@Test
	void admitsTheCapacityPlusWholePermitsOfRefill() {
		assertThat(SIX_A_MINUTE.admissions(Duration.ofSeconds(9))).isEqualTo(6);
		assertThat(SIX_A_MINUTE.admissions(Duration.ofSeconds(10))).isEqualTo(7);
		assertThat(SIX_A_MINUTE.admissions(Duration.ofSeconds(65))).isEqualTo(12);
	}

	@Test
	void aRestartedRedisAddsACapacityAndEachLocalInstanceABucketOfItsOwn() {
		// Redis: (1 + 3) × 6 + 10; local: 2 × (6 + 10)
		assertThat(SIX_A_MINUTE.stated(Duration.ofSeconds(100), 3, 2)).isEqualTo(34 + 32);
		assertThat(SIX_A_MINUTE.stated(Duration.ofSeconds(100), 0, 0)).isEqualTo(16);
	}

	@Test
	void sumsTheAdmissionsBeyondTheBoundOverClients() {
		Map<String, Long> admitted = Map.of("a", 6L, "b", 9L, "c", 7L);
		assertThat(TokenBucketBound.beyond(admitted, 7)).isEqualTo(2);
		assertThat(TokenBucketBound.clientsBeyond(admitted, 7)).isEqualTo(1);
	}

}
