package dev.ratelimit.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

/**
 * The service renews the concurrency permits of the calls it decided until they are
 * released: a call keeps its permit however long it runs, every third of the lease time,
 * and a released call is renewed no more. The scheduler is driven by hand, with a manual
 * clock.
 */
class LeaseRenewalTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final List<Runnable> renewals = new CopyOnWriteArrayList<>();

	private final ScheduledFuture<?> renewal = mock(ScheduledFuture.class);

	private final ScheduledExecutorService scheduler = mock(ScheduledExecutorService.class);

	private final RateLimitContext call = RateLimitContext
		.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null);

	private final RateLimitService service;

	LeaseRenewalTests() {
		given(this.scheduler.scheduleAtFixedRate(any(Runnable.class), anyLong(), anyLong(), eq(TimeUnit.MICROSECONDS)))
			.willAnswer((invocation) -> {
				this.renewals.add(invocation.getArgument(0));
				return this.renewal;
			});
		Policy streams = new Policy("streams", "principal", (context) -> "user:alice", false,
				List.of(Limit.builder(Algorithm.CONCURRENCY).max(1).leaseTime(Duration.ofSeconds(1)).build()),
				Map.of());
		this.service = new RateLimitService(this.limiter, new PolicyRegistry(List.of(streams), "free"),
				(context) -> null, List.of(), "memory", () -> this.scheduler);
	}

	@Test
	void aCallInFlightKeepsItsPermitPastItsLeaseTimeAndGivesItBackWhenReleased() {
		RateLimitResult first = this.service.decide(List.of("streams"), 1, this.call);
		assertThat(first.isAllowed()).isTrue();
		assertThat(this.service.heldDecisions()).isOne();
		// renewed every third of the one-second lease
		verify(this.scheduler).scheduleAtFixedRate(any(Runnable.class), eq(333_333L), eq(333_333L),
				eq(TimeUnit.MICROSECONDS));
		for (int i = 0; i < 30; i++) {
			this.clock.advance(Duration.ofMillis(333));
			this.renewals.forEach(Runnable::run);
		}
		// ten seconds into the first call, with a one-second lease: the second is still
		// refused
		assertThat(this.service.decide(List.of("streams"), 1, this.call).isAllowed()).isFalse();
		this.service.release(first);
		verify(this.renewal).cancel(false);
		assertThat(this.service.heldDecisions()).isZero();
		RateLimitResult second = this.service.decide(List.of("streams"), 1, this.call);
		assertThat(second.isAllowed()).isTrue();
		this.service.release(second);
	}

	@Test
	void aRejectedCallOrOneWithoutConcurrencyLimitsHoldsNothing() {
		RateLimitResult first = this.service.decide(List.of("streams"), 1, this.call);
		RateLimitResult rejected = this.service.decide(List.of("streams"), 1, this.call);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(this.service.heldDecisions()).isOne();
		this.service.release(rejected);
		assertThat(this.service.heldDecisions()).isOne();
		this.service.release(first);
		assertThat(this.service.heldDecisions()).isZero();
	}

}
