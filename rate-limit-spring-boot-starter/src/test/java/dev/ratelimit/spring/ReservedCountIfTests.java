package dev.ratelimit.spring;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The decision path of {@code count-if-mode: reserve}: a success gets its reserved permit
 * back, also beside a {@code check-then-charge} policy in the same call, and a limiter
 * that cannot give permits back is refused at start-up rather than let every success
 * count.
 */
class ReservedCountIfTests {

	private static final RateLimitResponse OK = response(200);

	private static final RateLimitResponse UNAUTHORIZED = response(401);

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().build();

	@Test
	void aSuccessGetsItsReservedPermitBackAndAFailureKeepsIt() throws Exception {
		RateLimitService service = service(this.limiter, policy("login-failures", Limit.fixedWindow("3/15m"), true));
		settle(service, List.of("login-failures"), OK);
		assertThat(remaining("login-failures", Limit.fixedWindow("3/15m"))).isEqualTo(3);
		settle(service, List.of("login-failures"), UNAUTHORIZED);
		assertThat(remaining("login-failures", Limit.fixedWindow("3/15m"))).isEqualTo(2);
	}

	@Test
	void aReservationBesideACheckThenChargePolicyIsGivenBackForASuccess() throws Exception {
		RateLimitService service = service(this.limiter, policy("login-failures", Limit.fixedWindow("3/15m"), true),
				policy("error-budget", Limit.fixedWindow("100/15m"), false));
		settle(service, List.of("login-failures", "error-budget"), OK);
		assertThat(remaining("login-failures", Limit.fixedWindow("3/15m"))).isEqualTo(3);
		settle(service, List.of("login-failures", "error-budget"), UNAUTHORIZED);
		assertThat(remaining("login-failures", Limit.fixedWindow("3/15m"))).isEqualTo(2);
		assertThat(remaining("error-budget", Limit.fixedWindow("100/15m"))).isEqualTo(99);
	}

	@Test
	void aLimiterThatCannotGivePermitsBackIsRefusedForAReservingPolicyNamingIt() {
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> service(new LimiterWithoutRefund(this.limiter),
					policy("login-failures", Limit.fixedWindow("3/15m"), true)))
			.satisfies((ex) -> assertThat(ex.getProblems()).singleElement().satisfies((problem) -> {
				assertThat(problem.property()).isEqualTo("ratelimit.policies.login-failures.count-if-mode");
				assertThat(problem.reason()).contains("does not implement refund()")
					.contains("set count-if-mode: check-then-charge");
			}));
		// check-then-charge needs no refund
		RateLimitService service = service(new LimiterWithoutRefund(this.limiter),
				policy("error-budget", Limit.fixedWindow("100/15m"), false));
		assertThat(service.problemsWith(service.policies())).isEmpty();
	}

	private void settle(RateLimitService service, List<String> policies, RateLimitResponse response) throws Exception {
		RateLimitResult result = service.decide(policies, 1, context());
		assertThat(result.isAllowed()).isTrue();
		service.chargeAfterResponse(result, response);
	}

	private long remaining(String policy, Limit limit) {
		return this.limiter.inspect(List.of(new KeyedLimit(policy, "all", limit))).get(0).remaining();
	}

	private static RateLimitService service(RateLimiter limiter, Policy... policies) {
		return new RateLimitService(limiter, new PolicyRegistry(List.of(policies), "free"), (context) -> null,
				List.of(), "memory", null, dev.ratelimit.core.TimeSource.system());
	}

	private static Policy policy(String name, Limit limit, boolean reserve) {
		return new Policy(name, "global", (context) -> "all", false, List.of(limit), Map.of(),
				RateLimitCondition.parse("#{#response.status == 401}"), reserve);
	}

	private static RateLimitContext context() throws Exception {
		return RateLimitContext.forInvocation(null, Object.class.getMethod("toString"), new Object[0], new String[0],
				null);
	}

	private static RateLimitResponse response(int status) {
		return new RateLimitResponse() {

			@Override
			public int getStatus() {
				return status;
			}

			@Override
			public @Nullable String getHeader(String name) {
				return null;
			}

		};
	}

	/**
	 * An application's own limiter, written before refunds: it keeps the default.
	 */
	private static final class LimiterWithoutRefund implements RateLimiter {

		private final RateLimiter delegate;

		LimiterWithoutRefund(RateLimiter delegate) {
			this.delegate = delegate;
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			return this.delegate.acquire(limits, cost);
		}

		@Override
		public List<LimitStatus> inspect(List<KeyedLimit> limits) {
			return this.delegate.inspect(limits);
		}

		@Override
		public void release(Decision decision) {
			this.delegate.release(decision);
		}

		@Override
		public void reset(KeyedLimit limit) {
			this.delegate.reset(limit);
		}

	}

}
