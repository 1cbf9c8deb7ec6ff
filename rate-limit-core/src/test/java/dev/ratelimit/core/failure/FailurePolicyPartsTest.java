package dev.ratelimit.core.failure;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link FailurePolicyRateLimiter} over a store of parts that fail apart, as the masters
 * of a Redis Cluster do: a fake whose parts answer, answer late or are down on their own,
 * on a manual clock and a manual cool-down clock. One part late or down leaves the calls
 * of the others to the store; a call on several parts is routed by the worst of them;
 * each part is checked, probed and brought back on its own.
 */
class FailurePolicyPartsTest {

	private static final Duration COOL_DOWN = Duration.ofSeconds(1);

	/** Long enough that the background check never runs in a test: tests call it. */
	private static final Duration RECOVERY_CHECK = Duration.ofHours(1);

	private final ManualTimeSource clock = new ManualTimeSource();

	private final AtomicLong nanoTime = new AtomicLong(1_000_000_000L);

	private final PartedStore store = new PartedStore(this.clock, "a", "b", "c");

	private final List<Throwable> reported = new CopyOnWriteArrayList<>();

	private final List<FailurePolicyRateLimiter> built = new ArrayList<>();

	@AfterEach
	void close() {
		this.built.forEach(FailurePolicyRateLimiter::close);
	}

	private FailurePolicyRateLimiter policy(FailureMode mode) {
		FailurePolicyRateLimiter policy = FailurePolicyRateLimiter.builder(this.store)
			.failureMode(mode)
			.coolDown(COOL_DOWN)
			.recoveryCheckInterval(RECOVERY_CHECK)
			.failureListener(this.reported::add)
			.timeSource(this.clock)
			.nanoTime(this.nanoTime::get)
			.build();
		this.built.add(policy);
		return policy;
	}

	/** A client of two permits an hour whose state lives on the given part. */
	private static KeyedLimit client(String part) {
		return new KeyedLimit(part, "client", Limit.tokenBucket("2/1h"));
	}

	@Test
	void aPartDownLeavesTheCallsOfTheOtherPartsToTheStore() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		for (String part : List.of("a", "b", "c")) {
			exhaust(policy, client(part));
		}
		this.store.behaviour("b", Behaviour.DOWN);
		assertThat(policy.acquire(client("b"), 1).source()).isEqualTo(Decision.Source.FAILED_OPEN);
		for (int i = 0; i < 10; i++) {
			for (String part : List.of("a", "c")) {
				Decision decision = policy.acquire(client(part), 1);
				assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
				assertThat(decision.isAllowed()).isFalse();
			}
			assertThat(policy.acquire(client("b"), 1).source()).isEqualTo(Decision.Source.FAILED_OPEN);
		}
		assertThat(this.store.asked("b")).as("calls on a part that is down do not ask it").isEqualTo(4);
		assertThat(policy.state("b")).isEqualTo(BackendState.DOWN);
		assertThat(policy.state("a")).isEqualTo(BackendState.UP);
		assertThat(policy.state()).as("the worst part").isEqualTo(BackendState.DOWN);
		assertThat(policy.isAvailable()).isFalse();
		assertThat(this.reported).singleElement().isInstanceOf(IOException.class);
	}

	@Test
	void aPartLateIsDecidedHereAndProbedOnItsOwnOnceItsCoolDownHasPassed() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour("b", Behaviour.LATE);
		assertThat(policy.acquire(client("b"), 1).source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		this.store.behaviour("b", Behaviour.ANSWER);
		assertThat(policy.acquire(client("b"), 1).source()).as("cooling down")
			.isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(policy.acquire(client("a"), 1).source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(policy.state("b")).isEqualTo(BackendState.LATE);
		assertThat(policy.isAvailable()).as("late is not down").isTrue();
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		assertThat(policy.acquire(client("b"), 1).source()).as("the probe").isEqualTo(Decision.Source.BACKEND);
		assertThat(policy.state("b")).isEqualTo(BackendState.UP);
		assertThat(this.store.asked("b")).isEqualTo(2);
	}

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void aCallOnSeveralPartsIsDecidedByTheFailureModeIfAnyIsDownAndHereIfAnyIsLate(FailureMode mode) {
		FailurePolicyRateLimiter policy = policy(mode);
		List<KeyedLimit> across = List.of(client("a"), client("b"));
		assertThat(policy.acquire(across, 1).source()).isEqualTo(Decision.Source.BACKEND);
		this.store.behaviour("b", Behaviour.LATE);
		assertThat(policy.acquire(across, 1).source()).isEqualTo(lateSource(mode));
		this.store.behaviour("c", Behaviour.DOWN);
		policy.acquire(client("c"), 1);
		// b late and c down: the failure mode decides
		assertThat(policy.acquire(List.of(client("a"), client("b"), client("c")), 1).source())
			.isEqualTo(downSource(mode));
		// a up and c down: the failure mode decides, though a could have
		assertThat(policy.acquire(List.of(client("a"), client("c")), 1).source()).isEqualTo(downSource(mode));
		assertThat(policy.acquire(client("a"), 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	private static Decision.Source lateSource(FailureMode mode) {
		return (mode == FailureMode.DENY) ? Decision.Source.FAILED_CLOSED : Decision.Source.LOCAL_FALLBACK;
	}

	private static Decision.Source downSource(FailureMode mode) {
		return switch (mode) {
			case ALLOW -> Decision.Source.FAILED_OPEN;
			case DENY -> Decision.Source.FAILED_CLOSED;
			case LOCAL -> Decision.Source.LOCAL_FALLBACK;
		};
	}

	@Test
	void aFailureOnOnePartOfACallIsHeldAgainstThatPartOnly() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour("b", Behaviour.DOWN);
		assertThat(policy.acquire(List.of(client("a"), client("b")), 1).source())
			.isEqualTo(Decision.Source.FAILED_OPEN);
		assertThat(policy.state("a")).isEqualTo(BackendState.UP);
		assertThat(policy.state("b")).isEqualTo(BackendState.DOWN);
		assertThat(policy.acquire(client("a"), 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void aFailureThatNamesNoPartIsHeldAgainstEveryPartOfTheCall() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.namesParts = false;
		this.store.behaviour("b", Behaviour.DOWN);
		policy.acquire(List.of(client("a"), client("b")), 1);
		assertThat(policy.state("a")).isEqualTo(BackendState.DOWN);
		assertThat(policy.state("b")).isEqualTo(BackendState.DOWN);
		assertThat(policy.acquire(client("c"), 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void theRecoveryCheckWritesToEachPartDownAndBringsEachBackAlone() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour("b", Behaviour.DOWN);
		this.store.behaviour("c", Behaviour.DOWN);
		policy.acquire(client("b"), 1);
		policy.acquire(client("c"), 1);
		this.store.behaviour("b", Behaviour.ANSWER);
		policy.checkWhileUnusable();
		assertThat(this.store.checks).containsOnlyKeys("b", "c");
		assertThat(policy.acquire(client("b"), 1).source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(policy.acquire(client("c"), 1).source()).isEqualTo(Decision.Source.FAILED_OPEN);
		assertThat(this.store.reconnects).hasValue(1);
		this.store.behaviour("c", Behaviour.ANSWER);
		policy.checkWhileUnusable();
		assertThat(policy.acquire(client("c"), 1).source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(this.store.checks.get("a")).as("a part that is up is not checked").isNull();
		policy.checkWhileUnusable();
		assertThat(this.store.reconnects).as("nothing to check once every part is up").hasValue(2);
	}

	@Test
	void theRecoveryCheckEndsAPartsLateStateOnlyAfterItsCoolDown() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour("b", Behaviour.LATE);
		policy.acquire(client("b"), 1);
		this.store.behaviour("b", Behaviour.ANSWER);
		policy.checkWhileUnusable();
		assertThat(this.store.checks).isEmpty();
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		policy.checkWhileUnusable();
		assertThat(this.store.checks).containsOnlyKeys("b");
		assertThat(policy.state("b")).isEqualTo(BackendState.UP);
	}

	@Test
	void aHealthCheckWritesToEveryPartEndsAPartDownButNoPartsCoolDown() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour("b", Behaviour.LATE);
		this.store.behaviour("c", Behaviour.DOWN);
		policy.acquire(client("b"), 1);
		policy.acquire(client("c"), 1);
		this.store.behaviour("b", Behaviour.ANSWER);
		this.store.behaviour("c", Behaviour.ANSWER);
		policy.check();
		assertThat(this.store.checks).containsOnlyKeys("a", "b", "c");
		assertThat(policy.state("c")).isEqualTo(BackendState.UP);
		assertThat(policy.state("b")).as("cooling down still").isEqualTo(BackendState.LATE);
		assertThat(policy.acquire(client("b"), 1).source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
	}

	@Test
	void aHealthCheckThatFailsOnOnePartJudgesThatPartAndSaysSo() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour("a", Behaviour.LATE);
		this.store.behaviour("c", Behaviour.DOWN);
		assertThatExceptionOfType(BackendUnavailableException.class).isThrownBy(policy::check)
			.satisfies((ex) -> assertThat(ex.part()).isEqualTo("a"))
			.satisfies((ex) -> assertThat(ex.getSuppressed()).hasSize(1));
		assertThat(policy.state("a")).isEqualTo(BackendState.LATE);
		assertThat(policy.state("b")).isEqualTo(BackendState.UP);
		assertThat(policy.state("c")).isEqualTo(BackendState.DOWN);
	}

	@Test
	void aPartTheStoreNoLongerHasIsForgottenAndItsCallsFollowTheirNewPart() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour("b", Behaviour.DOWN);
		policy.acquire(client("b"), 1);
		// a failover: b's calls now live on d, which answers
		this.store.moved("b", "d");
		policy.checkWhileUnusable();
		assertThat(policy.isAvailable()).isTrue();
		assertThat(policy.state()).isEqualTo(BackendState.UP);
		assertThat(this.store.checks).as("b is gone: not checked").isEmpty();
		assertThat(policy.acquire(client("b"), 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void concurrencyPermitsOnAPartThatIsUpAreReleasedAndRenewedThereWhileAnotherIsDown() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		KeyedLimit permit = new KeyedLimit("a", "client", Limit.concurrency(1));
		Decision held = policy.acquire(permit, 1);
		assertThat(held.leases()).hasSize(1);
		this.store.behaviour("b", Behaviour.DOWN);
		policy.acquire(client("b"), 1);
		policy.renew(held);
		policy.release(held);
		assertThat(this.store.renewed).hasValue(1);
		assertThat(this.store.released).hasValue(1);
	}

	@Test
	void asynchronouslyAPartDownLeavesTheCallsOfTheOtherPartsToTheStore() throws Exception {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		exhaust(policy, client("a"));
		this.store.behaviour("b", Behaviour.DOWN);
		assertThat(policy.acquireAsync(List.of(client("b")), 1).get(5, TimeUnit.SECONDS).source())
			.isEqualTo(Decision.Source.FAILED_OPEN);
		Decision decision = policy.acquireAsync(List.of(client("a")), 1).get(5, TimeUnit.SECONDS);
		assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(decision.isAllowed()).isFalse();
		assertThat(policy.state("b")).isEqualTo(BackendState.DOWN);
	}

	private static void exhaust(FailurePolicyRateLimiter policy, KeyedLimit client) {
		for (int i = 0; i < 2; i++) {
			assertThat(policy.acquire(client, 1).isAllowed()).isTrue();
		}
		assertThat(policy.acquire(client, 1).isAllowed()).isFalse();
	}

	enum Behaviour {

		ANSWER, LATE, DOWN

	}

	/**
	 * A store whose state is an in-memory limiter, split in parts: a limit lives on the
	 * part its policy names (or the part that policy moved to), and each part fails as
	 * set by hand. A call fails at the first of its parts that fails, and says which.
	 */
	static final class PartedStore implements RemoteRateLimiter {

		private final InMemoryRateLimiter state;

		private final List<String> parts = new CopyOnWriteArrayList<>();

		private final Map<String, String> movedTo = new ConcurrentHashMap<>();

		private final Map<String, Behaviour> behaviours = new ConcurrentHashMap<>();

		private final Map<String, Integer> asked = new ConcurrentHashMap<>();

		final Map<String, Integer> checks = new ConcurrentHashMap<>();

		final AtomicLong reconnects = new AtomicLong();

		final AtomicLong released = new AtomicLong();

		final AtomicLong renewed = new AtomicLong();

		volatile boolean namesParts = true;

		PartedStore(ManualTimeSource clock, String... parts) {
			this.state = InMemoryRateLimiter.builder().timeSource(clock).build();
			this.parts.addAll(List.of(parts));
		}

		void behaviour(String part, Behaviour behaviour) {
			this.behaviours.put(part, behaviour);
		}

		void moved(String from, String to) {
			this.movedTo.put(from, to);
			this.parts.remove(from);
			this.parts.add(to);
		}

		int asked(String part) {
			return this.asked.getOrDefault(part, 0);
		}

		private String partOf(KeyedLimit limit) {
			return this.movedTo.getOrDefault(limit.policy(), limit.policy());
		}

		@Override
		public List<String> partsOf(List<KeyedLimit> limits) {
			return limits.stream().map(this::partOf).distinct().toList();
		}

		@Override
		public List<String> parts() {
			return List.copyOf(this.parts);
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			for (String part : partsOf(limits)) {
				this.asked.merge(part, 1, Integer::sum);
				fail(part);
			}
			return this.state.acquire(limits, cost);
		}

		private void fail(String part) {
			String named = this.namesParts ? part : null;
			switch (this.behaviours.getOrDefault(part, Behaviour.ANSWER)) {
				case LATE -> throw new BackendUnavailableException(BackendUnavailableException.Reason.LATE, "late",
						new TimeoutException("no answer in time"), named);
				case DOWN -> throw new BackendUnavailableException(BackendUnavailableException.Reason.DOWN, "down",
						new IOException("Connection refused"), named);
				case ANSWER -> {
				}
			}
		}

		@Override
		public void check() {
			throw new AssertionError("a store of parts is checked part by part");
		}

		@Override
		public void check(String part) {
			this.checks.merge(part, 1, Integer::sum);
			fail(part);
		}

		@Override
		public void reconnectIfClosed() {
			this.reconnects.incrementAndGet();
		}

		@Override
		public List<LimitStatus> inspect(List<KeyedLimit> limits) {
			return this.state.inspect(limits);
		}

		@Override
		public void release(Decision decision) {
			this.released.incrementAndGet();
			this.state.release(decision);
		}

		@Override
		public void releaseWithoutWaiting(Decision decision) {
			throw new AssertionError("released without waiting");
		}

		@Override
		public void renew(Decision decision) {
			this.renewed.incrementAndGet();
		}

		@Override
		public void reset(KeyedLimit limit) {
			this.state.reset(limit);
		}

	}

}
