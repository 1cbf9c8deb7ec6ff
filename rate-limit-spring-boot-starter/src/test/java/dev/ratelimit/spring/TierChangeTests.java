package dev.ratelimit.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.overrides.InMemoryLimitOverrides;
import dev.ratelimit.spring.overrides.LimitOverride;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What carries over when a client's limits change to limits of another algorithm: a tier
 * change, an override, a reload. The limit at the same position takes the spent share
 * over (docs/RUNTIME.md, "What carries over"), so that moving between tiers never hands
 * out a fresh quota.
 */
class TierChangeTests {

	private static final String CLIENT = "user:alice";

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final RateLimitContext call = RateLimitContext
		.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null);

	private final AtomicReference<String> tier = new AtomicReference<>("free");

	@Test
	void thePaidTierStartsWithTheShareSpentInTheFreeTierAndTheFreeTierKeepsItsOwnCount() {
		RateLimitService service = service(plans(), null);
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(service.decide(List.of("api"), 45, this.call).isAllowed()).isTrue();
		this.tier.set("paid");
		// the worked example: 45 of 60 spent is 750 of 1000
		assertThat(remaining(service)).isEqualTo(249);
		this.tier.set("free");
		assertThat(remaining(service)).isEqualTo(14);
		this.tier.set("paid");
		assertThat(remaining(service)).isEqualTo(248);
	}

	@Test
	void aClientThatSpentTheFreeTierGetsNoFreshQuotaByFlippingTiers() {
		RateLimitService service = service(plans(), null);
		for (int i = 0; i < 6; i++) {
			assertThat(service.decide(List.of("api"), 10, this.call).isAllowed()).isTrue();
		}
		int allowed = 0;
		for (int i = 0; i < 20; i++) {
			this.tier.set((i % 2 == 0) ? "paid" : "free");
			allowed += service.decide(List.of("api"), 10, this.call).isAllowed() ? 1 : 0;
		}
		// a fresh paid bucket on every change let 10 of these through
		assertThat(allowed).isZero();
	}

	@Test
	void anOverrideOfAnotherAlgorithmStartsWithTheTiersShare() {
		InMemoryLimitOverrides overrides = new InMemoryLimitOverrides();
		RateLimitService service = service(plans(), overrides);
		service.decide(List.of("api"), 30, this.call);
		overrides.put(new LimitOverride("api", CLIENT, List.of(Limit.slidingWindowLog("200/1m")), null));
		// 30 of 60 is 100 of 200
		assertThat(remaining(service)).isEqualTo(99);
		assertThat(this.limiter.inspect(List.of(keyed(service, "free", 0))).get(0).remaining()).isEqualTo(30);
	}

	@Test
	void aReloadThatChangesATiersAlgorithmKeepsTheShareSpentUnderTheOldOne() {
		RateLimitService service = service(plans(), null);
		service.decide(List.of("api"), 20, this.call);
		Map<String, List<Limit>> reloaded = new LinkedHashMap<>();
		reloaded.put("free", List.of(Limit.tokenBucket("120/1m")));
		reloaded.put("paid", List.of(Limit.tokenBucket("1000/1m")));
		service.applyPolicies(new PolicyRegistry(List.of(policy(reloaded)), "free"));
		// 20 of 60 is 40 of 120
		assertThat(remaining(service)).isEqualTo(79);
	}

	@Test
	void aTiersLimitTakesOverOnlyWhatIsAnotherAlgorithmAndNotItsOwnState() {
		Map<String, List<Limit>> tiers = new LinkedHashMap<>();
		tiers.put("free", List.of(Limit.tokenBucket("10/1s"), Limit.fixedWindow("100/1h")));
		tiers.put("paid", List.of(Limit.fixedWindow("1000/1h"), Limit.tokenBucket("50/1s")));
		tiers.put("gold", List.of(Limit.slidingWindowCounter("2000/1h"), Limit.concurrency(5)));
		Policy policy = policy(tiers);
		// paid's fixed-window is free's second limit's state: only gold's counter
		KeyedLimit paid = policy.keyedLimit(CLIENT, policy.tiers().get("paid"), 0);
		assertThat(paid.name()).isEqualTo("fixed-window");
		assertThat(paid.carryFrom()).containsExactly(
				new KeyedLimit.Counterpart("sliding-window-counter", Limit.slidingWindowCounter("2000/1h")));
		// no concurrency limit carries or takes a share
		assertThat(policy.keyedLimit(CLIENT, policy.tiers().get("gold"), 1).carryFrom()).isEmpty();
		assertThat(policy.keyedLimit(CLIENT, policy.tiers().get("paid"), 1).carryFrom()).isEmpty();
		assertThat(Policy.keyedLimit("api", CLIENT, policy.tiers().get("paid"), 0).carryFrom()).isEmpty();
	}

	private static Map<String, List<Limit>> plans() {
		Map<String, List<Limit>> tiers = new LinkedHashMap<>();
		tiers.put("free", List.of(Limit.fixedWindow("60/1m")));
		tiers.put("paid", List.of(Limit.tokenBucket("1000/1m")));
		return tiers;
	}

	private RateLimitService service(Map<String, List<Limit>> tiers, InMemoryLimitOverrides overrides) {
		return new RateLimitService(this.limiter, new PolicyRegistry(List.of(policy(tiers)), "free"),
				(context) -> this.tier.get(), List.of(), "memory", overrides, this.clock);
	}

	private static Policy policy(Map<String, List<Limit>> tiers) {
		return new Policy("api", "principal", (context) -> CLIENT, false, List.of(), tiers);
	}

	private long remaining(RateLimitService service) {
		RateLimitResult result = service.decide(List.of("api"), 1, this.call);
		assertThat(result.isAllowed()).isTrue();
		return result.statuses().get(0).remaining();
	}

	private static KeyedLimit keyed(RateLimitService service, String tier, int index) {
		Policy policy = service.policies().get("api");
		return policy.keyedLimit(CLIENT, policy.tiers().get(tier), index);
	}

}
