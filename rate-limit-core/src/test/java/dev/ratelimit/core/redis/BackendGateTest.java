package dev.ratelimit.core.redis;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BackendGate}: after a failure and its cool-down one caller probes at a time, and a caller that learned nothing
 * about Redis (interrupted, or failed on its own) gives the probe back only if it was the probe.
 */
class BackendGateTest {

	private final BackendGate gate = new BackendGate(0);

	@Test
	void onlyTheProbeGivesTheProbeBack() throws Exception {
		assertThat(this.gate.tryEnter()).isTrue();
		this.gate.failed();
		// the cool-down (none here) has passed: the first caller probes, the next does not
		assertThat(CompletableFuture.supplyAsync(this.gate::tryEnter).get()).isTrue();
		assertThat(this.gate.tryEnter()).isFalse();
		// this thread, which entered before the failure, is interrupted: the other thread's probe goes on
		this.gate.abandoned();
		assertThat(this.gate.tryEnter()).isFalse();
	}

	@Test
	void aProbeThatLearnedNothingLetsTheNextCallerProbe() {
		this.gate.failed();
		assertThat(this.gate.tryEnter()).isTrue();
		assertThat(this.gate.tryEnter()).isFalse();
		this.gate.abandoned();
		assertThat(this.gate.tryEnter()).isTrue();
		this.gate.succeeded();
		assertThat(this.gate.isAvailable()).isTrue();
		assertThat(this.gate.tryEnter()).isTrue();
	}

}
