package dev.ratelimit.spring.reactive;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.util.pattern.PathPatternParser;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitCost;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.web.FilterRule;
import dev.ratelimit.spring.web.RateLimitHeaders;
import dev.ratelimit.spring.web.reactive.RateLimitWebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An exchange cancelled before any response (its client went away mid-login) counts as if
 * every {@code count-if} condition held: a reserved cost stays taken and a checked one is
 * charged, so that hanging up gives no free try.
 */
class ReactiveCancelledExchangeTests {

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().build();

	@Test
	void aCancelledExchangeKeepsItsReservationAndIsChargedUnderCheckThenCharge() {
		Policy reserved = policy("reserved", true);
		Policy checked = policy("checked", false);
		RateLimitService service = new RateLimitService(this.limiter,
				new PolicyRegistry(List.of(reserved, checked), "free"), (context) -> null, List.of(), "memory");
		FilterRule rule = new FilterRule(List.of(PathPatternParser.defaultInstance.parse("/login")), Set.of(),
				List.of(AppliedPolicy.of(reserved), AppliedPolicy.of(checked)), RateLimitCost.one(), null, false);
		RateLimitWebFilter filter = new RateLimitWebFilter(service, List.of(rule), new RateLimitHeaders(true, false),
				List::of, () -> null, null, 0, false);
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/login"));
		// the handler never answers; the client hangs up
		Disposable login = filter.filter(exchange, (passed) -> Mono.never()).subscribe();
		login.dispose();
		assertThat(remaining("reserved")).isEqualTo(2);
		assertThat(remaining("checked")).isEqualTo(2);
	}

	private long remaining(String policy) {
		return this.limiter.inspect(List.of(new KeyedLimit(policy, "all", Limit.fixedWindow("3/1h"))))
			.get(0)
			.remaining();
	}

	private static Policy policy(String name, boolean reserve) {
		return new Policy(name, "global", (context) -> "all", false, List.of(Limit.fixedWindow("3/1h")), Map.of(),
				RateLimitCondition.parse("#{#response.status == 401}"), reserve);
	}

}
