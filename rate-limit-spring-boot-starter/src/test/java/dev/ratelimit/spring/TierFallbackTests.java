package dev.ratelimit.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which limits a policy applies to a caller of a tier it does not list: its
 * {@code limits}, else (a policy with tiers only) those of the default tier, never none.
 */
class TierFallbackTests {

	private static final String CLIENT = "user:alice";

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
		.timeSource(new ManualTimeSource())
		.build();

	private final RateLimitContext call = RateLimitContext
		.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null);

	@Test
	void aCallerOfATierThatNoPolicyListsGetsTheDefaultTiersLimits() {
		RateLimitService service = service("gold", policy("plans", List.of(),
				Map.of("free", List.of(Limit.fixedWindow("3/1m")), "paid", List.of(Limit.fixedWindow("9/1m")))));
		assertThat(allowed(service, 5, "plans")).containsExactly(true, true, true, false, false);
		assertThat(service.decide(List.of("plans"), 1, this.call).tier()).isEqualTo("gold");
	}

	@Test
	void aTierListedByOnePolicyGetsTheDefaultTiersLimitsOfATierOnlyPolicyThatDoesNotListIt() {
		RateLimitService service = service("gold",
				policy("api", List.of(),
						Map.of("free", List.of(Limit.fixedWindow("3/1m")), "gold",
								List.of(Limit.fixedWindow("100/1m")))),
				policy("search", List.of(), Map.of("free", List.of(Limit.fixedWindow("2/1m")))));
		List<Boolean> allowed = allowed(service, 3, "api", "search");
		assertThat(allowed).containsExactly(true, true, false);
		RateLimitResult rejected = service.decide(List.of("api", "search"), 1, this.call);
		assertThat(rejected.violatedPolicies()).containsExactly("search");
		assertThat(rejected.statuses()).extracting(LimitStatus::limit).containsExactlyInAnyOrder(100L, 2L);
	}

	@Test
	void aPolicyWithLimitsGivesThemToATierItDoesNotList() {
		RateLimitService service = service("gold",
				policy("api", List.of(Limit.fixedWindow("4/1m")), Map.of("free", List.of(Limit.fixedWindow("2/1m")))));
		assertThat(allowed(service, 5, "api")).containsExactly(true, true, true, true, false);
	}

	@Test
	void aDefaultTierListedWithNoLimitsLeavesTheTiersNotListedUnlimitedOnPurpose() {
		RateLimitService service = service("gold",
				policy("api", List.of(), Map.of("free", List.of(), "paid", List.of(Limit.fixedWindow("1/1m")))));
		assertThat(allowed(service, 3, "api")).containsExactly(true, true, true);
	}

	private RateLimitService service(String tier, Policy... policies) {
		return new RateLimitService(this.limiter, new PolicyRegistry(List.of(policies), "free"), (context) -> tier,
				List.of(), "memory");
	}

	private static Policy policy(String name, List<Limit> limits, Map<String, List<Limit>> tiers) {
		return new Policy(name, "principal", (context) -> CLIENT, false, limits, tiers);
	}

	private List<Boolean> allowed(RateLimitService service, int calls, String... policies) {
		List<Boolean> allowed = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			allowed.add(service.decide(List.of(policies), 1, this.call).isAllowed());
		}
		return allowed;
	}

}
