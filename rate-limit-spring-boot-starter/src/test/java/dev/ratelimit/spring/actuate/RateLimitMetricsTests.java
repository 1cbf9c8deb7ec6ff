package dev.ratelimit.spring.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.metrics.RateLimitKeysMeterBinder;
import dev.ratelimit.spring.metrics.RateLimitMetrics;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.mockingDetails;
import static org.mockito.Mockito.spy;

/**
 * The metrics recorder on the real decision path, with an in-memory backend and a clock
 * that stands still.
 */
class RateLimitMetricsTests {

	private static final String CLIENT = "key:0123456789abcdef";

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final PolicyRegistry policies = new PolicyRegistry(List.of(
			new Policy("burst", "api-key", (context) -> CLIENT, false, List.of(Limit.tokenBucket("5/1m")), Map.of()),
			new Policy("observed", "api-key", (context) -> CLIENT, true, List.of(Limit.tokenBucket("2/1m")), Map.of()),
			new Policy("plans", "api-key", (context) -> CLIENT, false, List.of(),
					Map.of("free", List.of(Limit.fixedWindow("3/1m")), "paid", List.of(Limit.fixedWindow("9/1m")))),
			new Policy("smooth", "api-key", (context) -> CLIENT, false, List
				.of(Limit.builder(Algorithm.LEAKY_BUCKET).rate("1/1s").capacity(5).mode(LeakMode.SHAPE).build()),
					Map.of()),
			new Policy("paid-only", "api-key", (context) -> CLIENT, false, List.of(),
					Map.of("paid", List.of(Limit.fixedWindow("9/1m"))))),
			"free");

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final RateLimitContext call = RateLimitContext
		.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null);

	private RateLimitService service(RateLimiter limiter, RateLimitMetrics metrics) {
		return new RateLimitService(limiter, this.policies, (context) -> "free", List.of(metrics), "memory");
	}

	@Test
	void countsExactlyTheAllowedAndTheRejectedRequests() {
		RateLimitService service = service(this.limiter, new RateLimitMetrics(this.registry, this.policies, "memory"));
		List<Boolean> allowed = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			allowed.add(service.decide(List.of("burst"), 1, this.call).isAllowed());
		}
		assertThat(allowed).containsExactly(true, true, true, true, true, false, false, false);
		assertThat(requests("burst", "free", "allowed")).isEqualTo(5);
		assertThat(requests("burst", "free", "rejected")).isEqualTo(3);
		assertThat(this.registry.get(RateLimitMetrics.DECISION).tag("backend", "memory").timer().count()).isEqualTo(8);
	}

	@Test
	void countsEachPolicyOfACallInTheCallersTierAndARejectionOnlyAgainstThePolicyThatRejected() {
		RateLimitService service = new RateLimitService(this.limiter, this.policies, (context) -> "paid",
				List.of(new RateLimitMetrics(this.registry, this.policies, "memory")), "memory");
		for (int i = 0; i < 7; i++) {
			service.decide(List.of("burst", "plans"), 1, this.call);
		}
		assertThat(requests("burst", "paid", "allowed")).isEqualTo(5);
		assertThat(requests("burst", "paid", "rejected")).isEqualTo(2);
		// plans allowed all seven calls; burst alone rejected the last two.
		assertThat(requests("plans", "paid", "allowed")).isEqualTo(7);
		assertThat(requests("plans", "paid", "rejected")).isZero();
		assertThat(requests("plans", "free", "allowed")).isZero();
	}

	@Test
	void countsACallerOfATierNoPolicyKnowsUnderTheTierOther() {
		List<String> tiers = List.of("platinum", "Gold-7f3a", "free");
		java.util.Iterator<String> next = tiers.iterator();
		RateLimitService service = new RateLimitService(this.limiter, this.policies, (context) -> next.next(),
				List.of(new RateLimitMetrics(this.registry, this.policies, "memory")), "memory");
		for (int i = 0; i < tiers.size(); i++) {
			service.decide(List.of("burst"), 1, this.call);
		}
		assertThat(requests("burst", "other", "allowed")).isEqualTo(2);
		assertThat(requests("burst", "free", "allowed")).isEqualTo(1);
		assertThat(this.registry.find(RateLimitMetrics.REQUESTS).meters())
			.allSatisfy((meter) -> assertThat(meter.getId().getTag("tier")).isIn("free", "paid", "other"));
	}

	@Test
	void countsWhatAShadowPolicyWouldHaveRejected() {
		RateLimitService service = service(this.limiter, new RateLimitMetrics(this.registry, this.policies, "memory"));
		for (int i = 0; i < 5; i++) {
			assertThat(service.decide(List.of("observed"), 1, this.call).isAllowed()).isTrue();
		}
		assertThat(requests("observed", "free", "allowed")).isEqualTo(2);
		assertThat(requests("observed", "free", "shadow-rejected")).isEqualTo(3);
	}

	@Test
	void countsAShadowPolicyDecidedByTheFailureModeAsFailedOpenNeverAsARejection() {
		RateLimitMetrics metrics = new RateLimitMetrics(this.registry, this.policies, "redis");
		// deny: an enforced policy would count failed-closed; a shadow policy lets the
		// call through all the same
		service(new DownLimiter(false), metrics).decide(List.of("observed"), 1, this.call);
		service(new DownLimiter(false), metrics).decide(List.of("observed"), 1, this.call);
		service(new DownLimiter(true), metrics).decide(List.of("observed"), 1, this.call);
		assertThat(requests("observed", "free", "failed-open")).isEqualTo(3);
		assertThat(this.registry.find(RateLimitMetrics.REQUESTS)
			.tags("policy", "observed", "tier", "free", "outcome", "failed-closed")
			.counter()).isNull();
		assertThat(requests("observed", "free", "shadow-rejected")).isZero();
		assertThat(requests("observed", "free", "allowed")).isZero();
	}

	@Test
	void countsADelayOnlyAgainstThePolicyWhoseLimitDelayedTheCall() {
		RateLimitService service = service(this.limiter, new RateLimitMetrics(this.registry, this.policies, "memory"));
		// the shaping bucket lets the first call through at once and makes each later one
		// wait its turn
		for (int i = 0; i < 3; i++) {
			assertThat(service.decide(List.of("burst", "smooth"), 1, this.call).isAllowed()).isTrue();
		}
		assertThat(requests("smooth", "free", "allowed")).isEqualTo(1);
		assertThat(requests("smooth", "free", "delayed")).isEqualTo(2);
		assertThat(requests("burst", "free", "allowed")).isEqualTo(3);
		assertThat(this.registry.find(RateLimitMetrics.REQUESTS)
			.tags("policy", "burst", "tier", "free", "outcome", "delayed")
			.counter()).isNull();
	}

	@Test
	void timesOnlyTheCallsThatALimitApplied() {
		RateLimitService service = service(this.limiter, new RateLimitMetrics(this.registry, this.policies, "memory"));
		// paid-only has no limits for the caller's tier, free: the backend is not asked
		service.decide(List.of("paid-only"), 1, this.call);
		service.decide(List.of("paid-only"), 1, this.call);
		service.decide(List.of("burst"), 1, this.call);
		assertThat(requests("paid-only", "free", "allowed")).isEqualTo(2);
		assertThat(this.registry.get(RateLimitMetrics.DECISION).tag("backend", "memory").timer().count()).isEqualTo(1);
	}

	@Test
	void countsCallsDecidedByTheFailureModeAndTheBackendFailures() {
		RateLimitMetrics metrics = new RateLimitMetrics(this.registry, this.policies, "redis");
		RateLimitService open = service(new DownLimiter(true), metrics);
		RateLimitService closed = service(new DownLimiter(false), metrics);
		open.decide(List.of("burst"), 1, this.call);
		open.decide(List.of("burst"), 1, this.call);
		closed.decide(List.of("burst"), 1, this.call);
		metrics.onBackendFailure("redis", new TimeoutException("no answer within 100ms"));
		metrics.onBackendFailure("redis", new java.util.concurrent.CompletionException(new TimeoutException()));
		assertThat(requests("burst", "free", "failed-open")).isEqualTo(2);
		assertThat(requests("burst", "free", "failed-closed")).isEqualTo(1);
		assertThat(this.registry.get(RateLimitMetrics.BACKEND_FAILURES)
			.tags("backend", "redis", "exception", "TimeoutException")
			.counter()
			.count()).isEqualTo(2);
	}

	@Test
	void registersAZeroSeriesOfEveryConfiguredPolicyAndTierBeforeAnyCall() {
		new RateLimitMetrics(this.registry, this.policies, "memory");
		assertThat(requests("burst", "free", "allowed")).isZero();
		assertThat(requests("burst", "paid", "rejected")).isZero();
		assertThat(requests("observed", "paid", "shadow-rejected")).isZero();
		assertThat(this.registry.get(RateLimitMetrics.BACKEND_FAILURES)
			.tags("backend", "memory", "exception", RateLimitMetrics.NO_EXCEPTION)
			.counter()
			.count()).isZero();
		assertThat(this.registry.get(RateLimitMetrics.DECISION).tag("backend", "memory").timer().count()).isZero();
	}

	@Test
	void neverTouchesTheRegistryWhenRecordingADecision() {
		MeterRegistry watched = spy(new SimpleMeterRegistry());
		RateLimitService service = service(this.limiter, new RateLimitMetrics(watched, this.policies, "memory"));
		service.decide(List.of("burst"), 1, this.call);
		service.decide(List.of("observed"), 1, this.call);
		int meters = watched.getMeters().size();
		clearInvocations(watched);
		for (int i = 0; i < 20; i++) {
			service.decide(List.of("burst"), 1, this.call);
			service.decide(List.of("observed"), 1, this.call);
		}
		assertThat(mockingDetails(watched).getInvocations()).isEmpty();
		assertThat(watched.getMeters()).hasSize(meters);
		// the spy does see a look-up, such as registering a meter that already exists
		Counter.builder(RateLimitMetrics.REQUESTS)
			.tags("policy", "burst", "tier", "free", "outcome", "allowed")
			.register(watched);
		assertThat(mockingDetails(watched).getInvocations()).isNotEmpty();
	}

	@Test
	void neverTagsAMetricWithTheClientKey() {
		RateLimitService service = service(this.limiter, new RateLimitMetrics(this.registry, this.policies, "memory"));
		service.decide(List.of("burst", "observed", "plans"), 1, this.call);
		new RateLimitKeysMeterBinder(this.limiter).bindTo(this.registry);
		for (Meter meter : this.registry.getMeters()) {
			for (Tag tag : meter.getId().getTags()) {
				assertThat(tag.getValue()).as(meter.getId().toString()).doesNotContain(CLIENT).doesNotContain("key:");
			}
		}
	}

	@Test
	void gaugesTheKeysTheInMemoryBackendHolds() {
		new RateLimitKeysMeterBinder(this.limiter).bindTo(this.registry);
		RateLimitService service = service(this.limiter, new RateLimitMetrics(this.registry, this.policies, "memory"));
		service.decide(List.of("burst", "plans"), 1, this.call);
		assertThat(this.registry.get(RateLimitKeysMeterBinder.KEYS).tag("backend", "memory").gauge().value())
			.isEqualTo(2);
		// idle past their retention (5/1m: a minute, plus up to half of it), with no call
		// since
		this.clock.advance(Duration.ofMinutes(2));
		assertThat(this.registry.get(RateLimitKeysMeterBinder.KEYS).tag("backend", "memory").gauge().value()).isZero();
	}

	@Test
	void countsTheKeysTheInMemoryBackendEvictedByTheirState() {
		InMemoryRateLimiter small = InMemoryRateLimiter.builder().maxKeys(2).timeSource(this.clock).build();
		new RateLimitKeysMeterBinder(small).bindTo(this.registry);
		small.acquire(new KeyedLimit("api", "a", Limit.tokenBucket("10/1s")));
		small.acquire(new KeyedLimit("api", "b", Limit.tokenBucket("10/1d")), 5);
		// a, full again a second later, goes first; then b, which spent half its permits,
		// before c, which spent all
		// (the sweeps run on a background thread: each is awaited before the next key
		// comes)
		this.clock.advance(Duration.ofSeconds(1));
		small.acquire(new KeyedLimit("api", "c", Limit.tokenBucket("10/1d")), 10);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(evicted("fresh")).isEqualTo(1));
		small.acquire(new KeyedLimit("api", "d", Limit.tokenBucket("10/1d")), 10);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(evicted("spent")).isEqualTo(1));
		assertThat(evicted("fresh")).isEqualTo(1);
	}

	private double evicted(String state) {
		return this.registry.get(RateLimitKeysMeterBinder.EVICTED)
			.tags("backend", "memory", "state", state)
			.functionCounter()
			.count();
	}

	private double requests(String policy, String tier, String outcome) {
		return this.registry.get(RateLimitMetrics.REQUESTS)
			.tags("policy", policy, "tier", tier, "outcome", outcome)
			.counter()
			.count();
	}

	/**
	 * A backend that is down: every call is decided by the failure mode.
	 */
	private static final class DownLimiter implements RateLimiter {

		private final boolean allow;

		DownLimiter(boolean allow) {
			this.allow = allow;
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			return Decision.unavailable(this.allow, 1_000_000);
		}

		@Override
		public List<LimitStatus> inspect(List<KeyedLimit> limits) {
			throw new IllegalStateException("down");
		}

		@Override
		public void release(Decision decision) {
		}

		@Override
		public void reset(KeyedLimit limit) {
		}

	}

}
