package dev.ratelimit.core.failure;

import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.failure.BackendGate.Route;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BackendGate}: a late answer makes calls decide here and, once its cool-down has
 * passed, lets one caller at a time probe Redis; a failure sends every call to the
 * failure mode until a success, and no caller probes then; a caller that learned nothing
 * about Redis (interrupted, or failed on its own) gives the probe back only if it was the
 * probe. A caller is whatever it enters with: a thread, or an asynchronous call's token,
 * which may report from any thread.
 */
class BackendGateTest {

	private final BackendGate gate = new BackendGate(0);

	private final Object caller = new Object();

	private final Object another = new Object();

	@Test
	void callsAskRedisWhileItAnswersInTime() {
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
		this.gate.succeeded(this.caller);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
		assertThat(this.gate.isDown()).isFalse();
		assertThat(this.gate.isLate()).isFalse();
	}

	@Test
	void aLateAnswerLetsOneCallerAtATimeProbeOnceTheCoolDownHasPassed() {
		this.gate.late(this.caller);
		// the cool-down (none here) has passed: the first caller probes, the next decides
		// here
		assertThat(this.gate.enter(this.another)).isEqualTo(Route.ASK);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.LATE);
		// this caller is not the probe: the other caller's probe goes on
		this.gate.abandoned(this.caller);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.LATE);
		// nor does an answer in time to this caller, which asked before, end the late
		// state
		this.gate.succeeded(this.caller);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.LATE);
		// a check of the limiter's own that wrote in time does
		this.gate.recovered();
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
	}

	@Test
	void aCheckFromOutsideThatWroteInTimeEndsADownStateButNotALateOne() {
		this.gate.late(this.caller);
		this.gate.answered();
		assertThat(this.gate.isLate()).isTrue();
		assertThat(this.gate.enter(this.another)).as("the probe, after the cool-down").isEqualTo(Route.ASK);
		this.gate.abandoned(this.another);
		this.gate.failed(this.caller);
		this.gate.answered();
		assertThat(this.gate.isDown()).isFalse();
	}

	@Test
	void theProbesAnswerInTimeEndsTheLateState() {
		this.gate.late(this.caller);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
		this.gate.succeeded(this.caller);
		assertThat(this.gate.isLate()).isFalse();
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
	}

	@Test
	void anAsynchronousProbeIsEndedByItsAnswerOnAnotherThread() throws Exception {
		this.gate.late(this.caller);
		Object asynchronous = new Object();
		assertThat(this.gate.enter(asynchronous)).isEqualTo(Route.ASK);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.LATE);
		CompletableFuture.runAsync(() -> this.gate.succeeded(asynchronous)).get();
		assertThat(this.gate.isLate()).isFalse();
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
	}

	@Test
	void callsDecideHereDuringTheCoolDownOfALateAnswer() {
		BackendGate cooling = new BackendGate(Long.MAX_VALUE / 4);
		cooling.late(this.caller);
		assertThat(cooling.enter(this.caller)).isEqualTo(Route.LATE);
		assertThat(cooling.enter(this.another)).isEqualTo(Route.LATE);
		assertThat(cooling.unusableForMicros(7)).isPositive();
		assertThat(cooling.isDown()).isFalse();
	}

	@Test
	void aProbeThatLearnedNothingLetsTheNextCallerProbe() {
		this.gate.late(this.caller);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
		assertThat(this.gate.enter(this.another)).isEqualTo(Route.LATE);
		this.gate.abandoned(this.caller);
		assertThat(this.gate.enter(this.another)).isEqualTo(Route.ASK);
		assertThat(this.gate.isLateAndCooledDown()).isTrue();
	}

	@Test
	void aProbeThatFailedLetsTheNextCallerProbeWhereverItReports() throws Exception {
		this.gate.late(this.caller);
		Object asynchronous = new Object();
		assertThat(this.gate.enter(asynchronous)).isEqualTo(Route.ASK);
		CompletableFuture.runAsync(() -> this.gate.late(asynchronous)).get();
		assertThat(this.gate.enter(this.another)).isEqualTo(Route.ASK);
	}

	@Test
	void aFailureSendsEveryCallToTheFailureModeUntilASuccessWhateverTheTime() {
		assertThat(this.gate.failed(this.caller)).as("was up").isTrue();
		assertThat(this.gate.failed(this.caller)).as("was up").isFalse();
		// no cool-down: no caller ever probes a Redis that is down (a background check
		// does)
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.DOWN);
		assertThat(this.gate.enter(this.another)).isEqualTo(Route.DOWN);
		assertThat(this.gate.unusableForMicros(7)).isEqualTo(7);
		// a late answer (of a call sent before) does not make a Redis that is down usable
		this.gate.late(this.caller);
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.DOWN);
		// an answer in time to any call ends it, and a late answer of a call sent before
		// is forgotten with it
		this.gate.succeeded(this.caller);
		this.gate.recovered();
		assertThat(this.gate.enter(this.caller)).isEqualTo(Route.ASK);
		assertThat(this.gate.unusableForMicros(7)).isZero();
	}

}
