package dev.ratelimit.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.memory.InMemoryRateLimiter;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link ManualTimeSource}: the clock a test moves by hand.
 */
class ManualTimeSourceTest {

	@Test
	void startsAtTheFirstOfJanuary2026AndMovesOnlyWhenMoved() {
		ManualTimeSource clock = new ManualTimeSource();
		assertThat(clock.now()).isEqualTo(Instant.parse("2026-01-01T00:00:00Z"));
		assertThat(clock.nowMicros()).isEqualTo(1_767_225_600_000_000L).isEqualTo(clock.nowMicros());
		clock.advance(Duration.ofMillis(1500)).advanceMicros(7);
		assertThat(clock.now()).isEqualTo(Instant.parse("2026-01-01T00:00:01.500007Z"));
	}

	@Test
	void isSetForwardOrBackToTheMicrosecond() {
		ManualTimeSource clock = new ManualTimeSource(Instant.parse("2030-06-01T12:00:00Z"));
		clock.set(Instant.parse("2024-02-29T23:59:59.999999999Z"));
		assertThat(clock.now()).isEqualTo(Instant.parse("2024-02-29T23:59:59.999999Z"));
		clock.set(-1);
		assertThat(clock.now()).isEqualTo(Instant.parse("1969-12-31T23:59:59.999999Z"));
	}

	@Test
	void refusesToMoveBackwardsByAdvancing() {
		ManualTimeSource clock = new ManualTimeSource();
		assertThatIllegalArgumentException().isThrownBy(() -> clock.advance(Duration.ofSeconds(-1)))
			.withMessageContaining("PT-1S");
		assertThatIllegalArgumentException().isThrownBy(() -> clock.advanceMicros(-1));
		assertThat(clock.now()).isEqualTo(ManualTimeSource.DEFAULT_START);
	}

	@Test
	void advancesFromManyThreadsAtOnceAddUp() {
		ManualTimeSource clock = new ManualTimeSource(0);
		List<CompletableFuture<Void>> threads = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			threads.add(CompletableFuture.runAsync(() -> {
				for (int i = 0; i < 10_000; i++) {
					clock.advanceMicros(1);
				}
			}));
		}
		threads.forEach(CompletableFuture::join);
		assertThat(clock.nowMicros()).isEqualTo(40_000);
	}

	@Test
	void drivesALimiterWithoutSleeping() {
		ManualTimeSource clock = new ManualTimeSource();
		RateLimiter limiter = InMemoryRateLimiter.builder().timeSource(clock).build();
		KeyedLimit limit = new KeyedLimit("api", "alice", Limit.fixedWindow("2/1m"));
		assertThat(limiter.acquire(limit).isAllowed()).isTrue();
		assertThat(limiter.acquire(limit).isAllowed()).isTrue();
		Decision rejected = limiter.acquire(limit);
		assertThat(rejected.isAllowed()).isFalse();
		clock.advance(rejected.retryAfter());
		assertThat(limiter.acquire(limit).isAllowed()).isTrue();
	}

}
