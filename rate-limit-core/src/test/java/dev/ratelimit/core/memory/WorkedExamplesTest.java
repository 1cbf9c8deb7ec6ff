package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The worked examples of MISSION.md, verbatim: acceptance criteria that must hold
 * exactly.
 */
class WorkedExamplesTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final RateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	@Test
	void example1GeocodingBurstOfTwelveLetsTenPassThenFiveMoreOneSecondLater() {
		// Token bucket, refill 5 tokens/s, capacity 10, bucket full (the API was idle).
		KeyedLimit client = new KeyedLimit("geocode-burst", "client-1", Limit.tokenBucket("5/1s", 10));

		List<Decision> atZero = send(client, 12);
		assertThat(atZero).extracting(Decision::isAllowed)
			.containsExactly(true, true, true, true, true, true, true, true, true, true, false, false);
		assertThat(atZero.get(10).retryAfter()).isEqualTo(Duration.ofMillis(200));

		this.clock.advance(Duration.ofSeconds(1));
		List<Decision> atOne = send(client, 6);
		assertThat(atOne).extracting(Decision::isAllowed).containsExactly(true, true, true, true, true, false);
	}

	@Test
	void example2EmptyBucketHoldsFiveTokensAfterThreeSecondsSoFiveOfTenPass() {
		// Token bucket, refill 2 tokens/s, capacity 5, bucket empty at T=0, no requests
		// in between. The client is
		// first seen at T=0 with an empty bucket (initial: 0), so its first call is
		// rejected.
		Limit limit = Limit.builder(Algorithm.TOKEN_BUCKET).rate("2/1s").capacity(5).initial(0).build();
		KeyedLimit client = new KeyedLimit("example-2", "client-1", limit);
		assertThat(this.limiter.acquire(client).isAllowed()).isFalse();

		this.clock.advance(Duration.ofSeconds(3));
		assertThat(this.limiter.inspect(List.of(client)).get(0).remaining()).isEqualTo(5);
		assertFiveOfTenPass(send(client, 10));
	}

	@Test
	void example2HoldsWhenABurstEmptiedAFullBucketAtTimeZero() {
		KeyedLimit client = new KeyedLimit("example-2", "client-1", Limit.tokenBucket("2/1s", 5));
		assertThat(send(client, 5)).allMatch(Decision::isAllowed);
		assertThat(this.limiter.inspect(List.of(client)).get(0).remaining()).isZero();

		this.clock.advance(Duration.ofSeconds(3));
		assertFiveOfTenPass(send(client, 10));
	}

	private static void assertFiveOfTenPass(List<Decision> decisions) {
		assertThat(decisions.subList(0, 5)).allMatch(Decision::isAllowed);
		assertThat(decisions.subList(5, 10)).noneMatch(Decision::isAllowed);
	}

	private List<Decision> send(KeyedLimit client, int count) {
		List<Decision> decisions = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			decisions.add(this.limiter.acquire(client));
		}
		return decisions;
	}

}
