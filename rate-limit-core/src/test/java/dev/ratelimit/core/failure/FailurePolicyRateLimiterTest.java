package dev.ratelimit.core.failure;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link FailurePolicyRateLimiter} over a store that is a fake: it answers, answers late
 * or is down on demand, on a manual clock and a manual cool-down clock, without Redis;
 * its asynchronous calls may be answered by the test, so that a call is seen on its way.
 */
class FailurePolicyRateLimiterTest {

	private static final Duration COOL_DOWN = Duration.ofSeconds(1);

	/** Long enough that the background check never runs in a test: tests call it. */
	private static final Duration RECOVERY_CHECK = Duration.ofHours(1);

	private static final KeyedLimit TEN_PER_MINUTE = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1m"));

	private final ManualTimeSource clock = new ManualTimeSource();

	private final AtomicLong nanoTime = new AtomicLong(1_000_000_000L);

	private final FakeStore store = new FakeStore(this.clock);

	private final List<Throwable> reported = new CopyOnWriteArrayList<>();

	private final List<FailurePolicyRateLimiter> built = new ArrayList<>();

	@AfterEach
	void close() {
		this.built.forEach(FailurePolicyRateLimiter::close);
		Thread.interrupted();
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

	@Test
	void aFailurePolicyOverAnyLimiterGivesARefundToThatLimiter() {
		InMemoryRateLimiter store = InMemoryRateLimiter.builder().build();
		try (FailurePolicyRateLimiter policy = FailurePolicyRateLimiter.builder((RateLimiter) store)
			.failureMode(FailureMode.ALLOW)
			.build()) {
			KeyedLimit login = new KeyedLimit("login", "alice", Limit.fixedWindow("3/15m"));
			Decision first = policy.acquire(login);
			Decision second = policy.acquire(login);
			policy.refund(first, List.of(login), 1);
			assertThat(store.inspect(List.of(login)).get(0).remaining()).isEqualTo(2);
			policy.refundAsync(second, List.of(login), 1).join();
			assertThat(store.inspect(List.of(login)).get(0).remaining()).isEqualTo(3);
		}
	}

	@Test
	void whileTheStoreAnswersItDecides() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		List<Decision> decisions = acquire(policy, 12);
		assertThat(decisions).extracting(Decision::source).containsOnly(Decision.Source.BACKEND);
		assertThat(decisions).filteredOn(Decision::isAllowed).hasSize(10);
		assertThat(this.store.asked).hasValue(12);
		assertThat(policy.isAvailable()).isTrue();
		assertThat(this.reported).isEmpty();
	}

	@Test
	void aLateAnswerIsDecidedByTheLimitsHereWhichKnowWhatTheStoreAllowed() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		assertThat(acquire(policy, 6)).allMatch(Decision::isAllowed);
		this.store.behaviour = Behaviour.LATE;
		List<Decision> late = acquire(policy, 10);
		// the limits here were charged with the six calls the store allowed: four are
		// left, however late the store is, even in ALLOW
		assertThat(late).extracting(Decision::source).containsOnly(Decision.Source.LOCAL_FALLBACK);
		assertThat(late).filteredOn(Decision::isAllowed).hasSize(4);
		assertThat(policy.isAvailable()).as("late is not down").isTrue();
		assertThat(this.reported).singleElement().isInstanceOf(TimeoutException.class);
	}

	@Test
	void duringTheCoolDownNoCallWaitsForTheStoreAndWhatIsAllowedHereIsSentWithoutWaiting() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		this.store.behaviour = Behaviour.LATE;
		policy.acquire(TEN_PER_MINUTE, 1);
		assertThat(this.store.asked).hasValue(1);
		this.store.behaviour = Behaviour.ANSWER;
		List<Decision> cooling = acquire(policy, 11);
		assertThat(this.store.asked).as("no caller waits during the cool-down").hasValue(1);
		assertThat(cooling).filteredOn(Decision::isAllowed).hasSize(9);
		assertThat(this.store.sent).as("each call allowed here, sent so that the store counts it")
			.hasSize(9)
			.containsOnly(1L);
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		Decision probe = policy.acquire(TEN_PER_MINUTE, 1);
		assertThat(this.store.asked).hasValue(2);
		assertThat(probe.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).as("an answer in time ends the late state")
			.isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void aRejectedCallIsNotSentWithoutWaiting() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		assertThat(acquire(policy, 10)).allMatch(Decision::isAllowed);
		this.store.behaviour = Behaviour.LATE;
		assertThat(acquire(policy, 3)).noneMatch(Decision::isAllowed);
		assertThat(this.store.sent).isEmpty();
	}

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void whileTheStoreIsDownTheFailureModeDecidesWithoutAskingIt(FailureMode mode) {
		FailurePolicyRateLimiter policy = policy(mode);
		this.store.behaviour = Behaviour.DOWN;
		List<Decision> decisions = acquire(policy, 12);
		assertThat(this.store.asked).as("only the first call finds it down").hasValue(1);
		assertThat(policy.isAvailable()).isFalse();
		assertThat(this.reported).singleElement().isInstanceOf(IOException.class);
		switch (mode) {
			case ALLOW -> assertThat(decisions).allMatch(Decision::isAllowed)
				.extracting(Decision::source)
				.containsOnly(Decision.Source.FAILED_OPEN);
			case DENY -> assertThat(decisions).noneMatch(Decision::isAllowed)
				.allSatisfy((decision) -> assertThat(decision.retryAfter()).isEqualTo(RECOVERY_CHECK))
				.extracting(Decision::source)
				.containsOnly(Decision.Source.FAILED_CLOSED);
			case LOCAL ->
				assertThat(decisions).extracting(Decision::source).containsOnly(Decision.Source.LOCAL_FALLBACK);
		}
		if (mode == FailureMode.LOCAL) {
			assertThat(decisions).filteredOn(Decision::isAllowed).hasSize(10);
		}
	}

	@Test
	void theRecoveryCheckBringsCallsBackOnlyOnceTheStoreTakesAWrite() {
		FailurePolicyRateLimiter policy = policy(FailureMode.DENY);
		this.store.behaviour = Behaviour.DOWN;
		policy.acquire(TEN_PER_MINUTE, 1);
		policy.checkWhileUnusable();
		assertThat(policy.isAvailable()).isFalse();
		assertThat(this.store.checks).hasValue(1);
		assertThat(this.store.reconnects).hasValue(1);
		this.store.behaviour = Behaviour.ANSWER;
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).as("no caller probes a store that is down")
			.isEqualTo(Decision.Source.FAILED_CLOSED);
		policy.checkWhileUnusable();
		assertThat(policy.isAvailable()).isTrue();
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(this.reported).as("a check is not a call").hasSize(1);
	}

	@Test
	void theRecoveryCheckEndsALateStateOnlyAfterItsCoolDown() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		this.store.behaviour = Behaviour.LATE;
		policy.acquire(TEN_PER_MINUTE, 1);
		this.store.behaviour = Behaviour.ANSWER;
		policy.checkWhileUnusable();
		assertThat(this.store.checks).as("still cooling down").hasValue(0);
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		policy.checkWhileUnusable();
		assertThat(this.store.checks).hasValue(1);
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void anExplicitCheckSetsTheStateFromItsOutcome() {
		FailurePolicyRateLimiter policy = policy(FailureMode.DENY);
		this.store.behaviour = Behaviour.DOWN;
		assertThatExceptionOfType(BackendUnavailableException.class).isThrownBy(policy::check);
		assertThat(policy.isAvailable()).isFalse();
		this.store.behaviour = Behaviour.ANSWER;
		policy.check();
		assertThat(policy.isAvailable()).isTrue();
		this.store.behaviour = Behaviour.LATE;
		assertThatExceptionOfType(BackendUnavailableException.class).isThrownBy(policy::check);
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).as("late: refused here in DENY, not asked")
			.isEqualTo(Decision.Source.FAILED_CLOSED);
		assertThat(this.store.asked).hasValue(0);
	}

	@Test
	void aHealthCheckPolledHardDuringTheCoolDownOfALateAnswerBringsNoCallBackToTheStore() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		this.store.behaviour = Behaviour.LATE;
		policy.acquire(TEN_PER_MINUTE, 1);
		this.store.behaviour = Behaviour.ANSWER;
		List<Decision> cooling = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			// every check writes in time, over nine tenths of the cool-down
			policy.check();
			this.nanoTime.addAndGet(COOL_DOWN.toNanos() * 9 / 10 / 50);
			cooling.add(policy.acquire(TEN_PER_MINUTE, 1));
		}
		assertThat(this.store.checks).hasValue(50);
		assertThat(cooling).extracting(Decision::source).containsOnly(Decision.Source.LOCAL_FALLBACK);
		assertThat(this.store.asked).as("no call waited for the store during the cool-down").hasValue(1);
		this.nanoTime.addAndGet(COOL_DOWN.toNanos() / 10);
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).as("the probe, once the cool-down has passed")
			.isEqualTo(Decision.Source.BACKEND);
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void anInterruptedCallerIsDecidedHereAndTheStoreIsNotJudged() {
		FailurePolicyRateLimiter policy = policy(FailureMode.ALLOW);
		Thread.currentThread().interrupt();
		Decision decision = policy.acquire(TEN_PER_MINUTE, 1);
		assertThat(Thread.interrupted()).as("the flag is kept").isTrue();
		assertThat(decision.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(this.store.asked).hasValue(0);
		this.store.behaviour = Behaviour.INTERRUPTED;
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(Thread.interrupted()).isTrue();
		assertThat(this.reported).isEmpty();
		this.store.behaviour = Behaviour.ANSWER;
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void whatTheStoreServesWithoutAskingIsChargedHereAndAskedNothing() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		this.store.servesWithoutAsking = true;
		assertThat(acquire(policy, 10)).allMatch(Decision::isAllowed);
		assertThat(this.store.asked).hasValue(0);
		this.store.servesWithoutAsking = false;
		this.store.behaviour = Behaviour.LATE;
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).isAllowed()).as("the limits here know of the ten").isFalse();
	}

	@Test
	void permitsAreTakenAheadOnlyWhileTheStoreAnswersInTime() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		this.store.servesWithoutAsking = true;
		policy.acquire(TEN_PER_MINUTE, 1);
		policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join();
		this.store.servesWithoutAsking = false;
		this.store.behaviour = Behaviour.LATE;
		policy.acquire(TEN_PER_MINUTE, 1);
		// late: the calls the store still serves from what it holds here take nothing
		// ahead, which would only wait for a late store
		this.store.servesWithoutAsking = true;
		policy.acquire(TEN_PER_MINUTE, 1);
		policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join();
		// a probe answered in time ends the late state
		this.store.servesWithoutAsking = false;
		this.store.behaviour = Behaviour.ANSWER;
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		policy.acquire(TEN_PER_MINUTE, 1);
		this.store.servesWithoutAsking = true;
		policy.acquire(TEN_PER_MINUTE, 1);
		this.store.servesWithoutAsking = false;
		this.store.behaviour = Behaviour.DOWN;
		policy.acquire(TEN_PER_MINUTE, 1);
		this.store.servesWithoutAsking = true;
		policy.acquire(TEN_PER_MINUTE, 1);
		assertThat(this.store.takeAhead).containsExactly(true, true, true, false, false, false, true, true, false);
	}

	@Test
	void aBusyStateIsDecidedHereWithoutJudgingTheStore() {
		FailurePolicyRateLimiter policy = policy(FailureMode.DENY);
		this.store.busy = true;
		Decision decision = policy.acquire(TEN_PER_MINUTE, 1);
		assertThat(decision.source()).as("DENY refuses what it cannot ask").isEqualTo(Decision.Source.FAILED_CLOSED);
		assertThat(this.reported).isEmpty();
		this.store.busy = false;
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void concurrencyPermitsAreReleasedInTheStoreAndHereWithoutWaitingWhileDown() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		KeyedLimit one = new KeyedLimit("uploads", "alice", Limit.concurrency(1));
		Decision held = policy.acquire(one, 1);
		assertThat(held.leases()).hasSize(1);
		this.store.behaviour = Behaviour.LATE;
		assertThat(policy.acquire(one, 1).isAllowed()).as("the permit is held here too").isFalse();
		policy.release(held);
		assertThat(this.store.released).hasValue(1);
		assertThat(policy.acquire(one, 1).isAllowed()).as("and given back here").isTrue();
		Decision another = acquireAnswered(policy, new KeyedLimit("uploads", "bob", Limit.concurrency(1)));
		this.store.behaviour = Behaviour.DOWN;
		policy.acquire(TEN_PER_MINUTE, 1);
		policy.renew(another);
		assertThat(this.store.renewed).as("nothing is sent while down").hasValue(0);
		policy.release(another);
		assertThat(this.store.releasedWithoutWaiting).hasValue(1);
	}

	@Test
	void overAnyRateLimiterATimeoutIsLateAndAnyOtherFailureDown() {
		AtomicInteger calls = new AtomicInteger();
		FailingLimiter plain = new FailingLimiter(calls);
		FailurePolicyRateLimiter policy = FailurePolicyRateLimiter.builder((RateLimiter) plain)
			.failureMode(FailureMode.DENY)
			.recoveryCheckInterval(RECOVERY_CHECK)
			.nanoTime(this.nanoTime::get)
			.build();
		this.built.add(policy);
		plain.failure = new IllegalStateException("slow", new TimeoutException("no answer"));
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.FAILED_CLOSED);
		assertThat(policy.isAvailable()).as("late").isTrue();
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		plain.failure = new IllegalStateException("connection refused");
		policy.acquire(TEN_PER_MINUTE, 1);
		assertThat(policy.isAvailable()).isFalse();
		plain.failure = null;
		int before = calls.get();
		policy.checkWhileUnusable();
		assertThat(calls.get()).as("the health check is a call of its own").isEqualTo(before + 1);
		assertThat(policy.isAvailable()).isTrue();
		assertThat(policy.acquire(TEN_PER_MINUTE, 1).source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void asynchronouslyWhatTheStoreAllowsIsDecidedThereAndChargedHere() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		List<Decision> decisions = acquireAsync(policy, 12);
		assertThat(decisions).extracting(Decision::source).containsOnly(Decision.Source.BACKEND);
		assertThat(decisions).filteredOn(Decision::isAllowed).hasSize(10);
		assertThat(this.store.asked).hasValue(12);
		this.store.behaviour = Behaviour.LATE;
		Decision late = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join();
		assertThat(late.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(late.isAllowed()).as("the limits here know of the ten the store allowed").isFalse();
	}

	@Test
	void asynchronouslyACallWaitsForNobodyAndALateAnswerIsDecidedHereUntilAProbeAnswersInTime() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		this.store.answersByHand = true;
		CompletableFuture<Decision> first = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(first).as("the caller did not wait for the store").isNotDone();
		this.store.behaviour = Behaviour.LATE;
		this.store.answerNext();
		assertThat(first.join().source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(first.join().isAllowed()).isTrue();
		assertThat(this.reported).singleElement().isInstanceOf(TimeoutException.class);
		// the cool-down: decided here at once, and sent to the store without waiting
		this.store.behaviour = Behaviour.ANSWER;
		CompletableFuture<Decision> cooling = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(cooling).isCompleted();
		assertThat(cooling.join().source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(this.store.asked).hasValue(1);
		assertThat(this.store.sent).containsExactly(1L);
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		CompletableFuture<Decision> probe = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(probe).isNotDone();
		assertThat(this.store.asked).hasValue(2);
		// while the probe is on its way, other calls are still decided here
		CompletableFuture<Decision> meanwhile = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(meanwhile.join().source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(this.store.asked).hasValue(2);
		// the probe's answer in time, on another thread, ends the late state
		CompletableFuture.runAsync(this.store::answerNext).join();
		assertThat(probe.join().source()).isEqualTo(Decision.Source.BACKEND);
		CompletableFuture<Decision> after = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(this.store.asked).as("calls ask the store again").hasValue(3);
		this.store.answerNext();
		assertThat(after.join().source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void anAsynchronousProbeAnsweredLateGivesTheProbeBack() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		this.store.answersByHand = true;
		this.store.behaviour = Behaviour.LATE;
		policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		this.store.answerNext();
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		CompletableFuture<Decision> probe = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(this.store.asked).hasValue(2);
		this.store.answerNext();
		assertThat(probe.join().source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), 1)).as("a new cool-down").isCompleted();
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(this.store.asked).as("the next call after it probes").hasValue(3);
	}

	@Test
	void anAsynchronousProbeThatLearnedNothingLetsTheNextCallProbe() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		this.store.answersByHand = true;
		this.store.behaviour = Behaviour.LATE;
		policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		this.store.answerNext();
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		CompletableFuture<Decision> probe = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		this.store.behaviour = Behaviour.BUSY;
		this.store.answerNext();
		assertThat(probe.join().source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
		assertThat(this.reported).as("busy is no failure of the store").hasSize(1);
		policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(this.store.asked).as("the next call probes at once").hasValue(3);
	}

	@ParameterizedTest
	@EnumSource(FailureMode.class)
	void asynchronouslyWhileTheStoreIsDownTheFailureModeDecidesWithoutAskingIt(FailureMode mode) {
		FailurePolicyRateLimiter policy = policy(mode);
		this.store.answersByHand = true;
		this.store.behaviour = Behaviour.DOWN;
		CompletableFuture<Decision> first = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
		assertThat(first).isNotDone();
		this.store.answerNext();
		List<Decision> decisions = new ArrayList<>(List.of(first.join()));
		for (int i = 0; i < 11; i++) {
			CompletableFuture<Decision> decision = policy.acquireAsync(List.of(TEN_PER_MINUTE), 1);
			assertThat(decision).as("decided at once").isCompleted();
			decisions.add(decision.join());
		}
		assertThat(this.store.asked).as("only the first call finds it down").hasValue(1);
		assertThat(policy.isAvailable()).isFalse();
		assertThat(this.reported).singleElement().isInstanceOf(IOException.class);
		Decision.Source expected = switch (mode) {
			case ALLOW -> Decision.Source.FAILED_OPEN;
			case DENY -> Decision.Source.FAILED_CLOSED;
			case LOCAL -> Decision.Source.LOCAL_FALLBACK;
		};
		assertThat(decisions).extracting(Decision::source).containsOnly(expected);
		switch (mode) {
			case ALLOW -> assertThat(decisions).allMatch(Decision::isAllowed);
			case DENY -> assertThat(decisions).noneMatch(Decision::isAllowed);
			case LOCAL -> assertThat(decisions).filteredOn(Decision::isAllowed).hasSize(10);
		}
	}

	@Test
	void asynchronouslyTheRecoveryCheckBringsCallsBack() {
		FailurePolicyRateLimiter policy = policy(FailureMode.DENY);
		this.store.behaviour = Behaviour.DOWN;
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join().source())
			.isEqualTo(Decision.Source.FAILED_CLOSED);
		this.store.behaviour = Behaviour.ANSWER;
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join().source())
			.as("no caller probes a store that is down")
			.isEqualTo(Decision.Source.FAILED_CLOSED);
		policy.checkWhileUnusable();
		assertThat(policy.isAvailable()).isTrue();
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join().source()).isEqualTo(Decision.Source.BACKEND);
	}

	@Test
	void asynchronouslyABusyStateIsDecidedHereAndAMistakeFailsTheFuture() {
		FailurePolicyRateLimiter policy = policy(FailureMode.DENY);
		this.store.busy = true;
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join().source())
			.isEqualTo(Decision.Source.FAILED_CLOSED);
		assertThat(this.reported).isEmpty();
		this.store.busy = false;
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), -1)).isCompletedExceptionally()
			.failsWithin(Duration.ZERO)
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(IllegalArgumentException.class);
		KeyedLimit sameName = new KeyedLimit("api", "alice", Limit.tokenBucket("20/1m"));
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE, sameName), 1)).isCompletedExceptionally();
		assertThat(policy.acquireAsync(List.of(), 1).join().isAllowed()).isTrue();
		assertThat(this.store.asked).hasValue(0);
	}

	@Test
	void asynchronouslyConcurrencyPermitsAreReleasedInTheStoreAndHere() {
		FailurePolicyRateLimiter policy = policy(FailureMode.LOCAL);
		KeyedLimit one = new KeyedLimit("uploads", "alice", Limit.concurrency(1));
		Decision held = policy.acquireAsync(List.of(one), 1).join();
		assertThat(held.source()).isEqualTo(Decision.Source.BACKEND);
		assertThat(held.leases()).hasSize(1);
		this.store.behaviour = Behaviour.LATE;
		assertThat(policy.acquireAsync(List.of(one), 1).join().isAllowed()).as("the permit is held here too").isFalse();
		assertThat(policy.releaseAsync(held)).isCompleted();
		assertThat(this.store.released).hasValue(1);
		Decision local = policy.acquireAsync(List.of(one), 1).join();
		assertThat(local.isAllowed()).as("and given back here").isTrue();
		policy.releaseAsync(local).join();
		assertThat(this.store.released).as("a local decision's permit is here only").hasValue(1);
		Decision another = acquireAnswered(policy, new KeyedLimit("uploads", "bob", Limit.concurrency(1)));
		this.store.behaviour = Behaviour.DOWN;
		policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join();
		policy.releaseAsync(another).join();
		assertThat(this.store.releasedWithoutWaiting).hasValue(1);
	}

	@Test
	void overAnyRateLimiterAnAsynchronousTimeoutIsLate() {
		FailingLimiter plain = new FailingLimiter(new AtomicInteger());
		FailurePolicyRateLimiter policy = FailurePolicyRateLimiter.builder((RateLimiter) plain)
			.failureMode(FailureMode.DENY)
			.recoveryCheckInterval(RECOVERY_CHECK)
			.nanoTime(this.nanoTime::get)
			.build();
		this.built.add(policy);
		plain.failure = new IllegalStateException("slow", new TimeoutException("no answer"));
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join().source())
			.isEqualTo(Decision.Source.FAILED_CLOSED);
		assertThat(policy.isAvailable()).as("late").isTrue();
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		plain.failure = null;
		assertThat(policy.acquireAsync(List.of(TEN_PER_MINUTE), 1).join().source()).isEqualTo(Decision.Source.BACKEND);
	}

	private Decision acquireAnswered(FailurePolicyRateLimiter policy, KeyedLimit limit) {
		Behaviour before = this.store.behaviour;
		this.store.behaviour = Behaviour.ANSWER;
		this.nanoTime.addAndGet(COOL_DOWN.toNanos());
		Decision decision = policy.acquire(limit, 1);
		assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND);
		this.store.behaviour = before;
		return decision;
	}

	private static List<Decision> acquireAsync(RateLimiter limiter, int calls) {
		List<Decision> decisions = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			CompletableFuture<Decision> decision = limiter.acquireAsync(List.of(TEN_PER_MINUTE), 1);
			assertThat(decision).isCompleted();
			decisions.add(decision.join());
		}
		return decisions;
	}

	private static List<Decision> acquire(RateLimiter limiter, int calls) {
		List<Decision> decisions = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			decisions.add(limiter.acquire(TEN_PER_MINUTE, 1));
		}
		return decisions;
	}

	enum Behaviour {

		ANSWER, LATE, DOWN, INTERRUPTED, BUSY

	}

	/**
	 * A store whose state is an in-memory limiter, and whose failures are set by hand.
	 */
	static final class FakeStore implements RemoteRateLimiter {

		final InMemoryRateLimiter state;

		volatile Behaviour behaviour = Behaviour.ANSWER;

		volatile boolean servesWithoutAsking;

		/** Whether each call served without asking might take more ahead, in order. */
		final List<Boolean> takeAhead = new CopyOnWriteArrayList<>();

		volatile boolean busy;

		final AtomicInteger asked = new AtomicInteger();

		final AtomicInteger checks = new AtomicInteger();

		final AtomicInteger reconnects = new AtomicInteger();

		final AtomicInteger released = new AtomicInteger();

		final AtomicInteger releasedWithoutWaiting = new AtomicInteger();

		final AtomicInteger renewed = new AtomicInteger();

		final List<Long> sent = new CopyOnWriteArrayList<>();

		/**
		 * Whether {@link #acquireAsync} leaves its answer to the test
		 * ({@link #answerNext}), rather than answering at once.
		 */
		volatile boolean answersByHand;

		private final Queue<Unanswered> unanswered = new ConcurrentLinkedQueue<>();

		FakeStore(ManualTimeSource clock) {
			this.state = InMemoryRateLimiter.builder().timeSource(clock).build();
		}

		@Override
		public @Nullable Decision decideWithoutAsking(List<KeyedLimit> limits, long cost, boolean takeAhead) {
			this.takeAhead.add(takeAhead);
			if (this.busy) {
				throw new BackendUnavailableException(BackendUnavailableException.Reason.BUSY, "busy");
			}
			return this.servesWithoutAsking ? this.state.acquire(limits, cost) : null;
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			this.asked.incrementAndGet();
			fail();
			return this.state.acquire(limits, cost);
		}

		@Override
		public CompletableFuture<Decision> acquireAsync(List<KeyedLimit> limits, long cost) {
			if (!this.answersByHand) {
				return RemoteRateLimiter.super.acquireAsync(limits, cost);
			}
			this.asked.incrementAndGet();
			CompletableFuture<Decision> answer = new CompletableFuture<>();
			this.unanswered.add(new Unanswered(limits, cost, answer));
			return answer;
		}

		/**
		 * Answers the oldest asynchronous call not yet answered, as the behaviour says.
		 */
		void answerNext() {
			Unanswered call = this.unanswered.remove();
			try {
				fail();
				call.answer().complete(this.state.acquire(call.limits(), call.cost()));
			}
			catch (RuntimeException ex) {
				call.answer().completeExceptionally(ex);
			}
		}

		private void fail() {
			switch (this.behaviour) {
				case LATE -> throw new BackendUnavailableException(BackendUnavailableException.Reason.LATE, "late",
						new TimeoutException("no answer in time"));
				case DOWN -> throw new BackendUnavailableException(BackendUnavailableException.Reason.DOWN, "down",
						new IOException("Connection refused"));
				case INTERRUPTED -> {
					Thread.currentThread().interrupt();
					throw new BackendUnavailableException(BackendUnavailableException.Reason.BUSY, "interrupted");
				}
				case BUSY -> throw new BackendUnavailableException(BackendUnavailableException.Reason.BUSY, "busy");
				case ANSWER -> {
				}
			}
		}

		@Override
		public void send(List<KeyedLimit> limits, long cost) {
			this.sent.add(cost);
			this.state.acquire(limits, cost);
		}

		@Override
		public void check() {
			this.checks.incrementAndGet();
			fail();
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
			this.releasedWithoutWaiting.incrementAndGet();
			this.state.release(decision);
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

	record Unanswered(List<KeyedLimit> limits, long cost, CompletableFuture<Decision> answer) {

	}

	/** A limiter that says nothing of its store: it throws what it is told to. */
	static final class FailingLimiter implements RateLimiter {

		private final InMemoryRateLimiter state = InMemoryRateLimiter.builder().build();

		private final AtomicInteger calls;

		volatile @Nullable RuntimeException failure;

		FailingLimiter(AtomicInteger calls) {
			this.calls = calls;
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			this.calls.incrementAndGet();
			RuntimeException failure = this.failure;
			if (failure != null) {
				throw failure;
			}
			return this.state.acquire(limits, cost);
		}

		@Override
		public List<LimitStatus> inspect(List<KeyedLimit> limits) {
			return this.state.inspect(limits);
		}

		@Override
		public void release(Decision decision) {
			this.state.release(decision);
		}

		@Override
		public void reset(KeyedLimit limit) {
			this.state.reset(limit);
		}

	}

}
