package dev.ratelimit.spring.overrides;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.WindowAlignment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The text form of an override in Redis: every limit, of every algorithm and parameter,
 * reads back equal, and a client key with any characters survives.
 */
class StoredOverridesTests {

	@Test
	void everyKindOfLimitReadsBackEqual() {
		List<Limit> limits = List.of(Limit.tokenBucket("5/1s", 10),
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("1/10s").capacity(3).initial(0).build(),
				Limit.leakyBucket("100/500ms"),
				Limit.builder(Algorithm.LEAKY_BUCKET)
					.rate("7/3d")
					.mode(LeakMode.SHAPE)
					.maxWait(Duration.ofMillis(1500))
					.build(),
				Limit.fixedWindow("100000/1d"), Limit.slidingWindowLog("60/1m"), Limit.slidingWindowCounter("500/1s"),
				Limit.builder(Algorithm.CONCURRENCY).max(4).leaseTime(Duration.ofSeconds(90)).build());
		LimitOverride override = new LimitOverride("api", "k:Zm9v/bar baz&x=y\nz", limits,
				Instant.parse("2027-01-01T00:00:00Z"));

		String text = StoredOverrides.encode(override);
		String[] names = StoredOverrides.policyAndClient(StoredOverrides.field("api", override.client()));

		assertThat(names).containsExactly("api", override.client());
		assertThat(StoredOverrides.decode(names[0], names[1], text)).isEqualTo(override);
	}

	@Test
	void aCalendarQuotaReadsBackEqual() {
		Limit monthly = Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("100000/1mo")
			.align(WindowAlignment.CALENDAR)
			.zone("Europe/Paris")
			.build();
		Limit weekly = Limit.builder(Algorithm.FIXED_WINDOW).rate("500/1w").align(WindowAlignment.CALENDAR).build();
		LimitOverride override = new LimitOverride("api", "alice", List.of(monthly, weekly, Limit.fixedWindow("5/1w")),
				Instant.parse("2027-01-01T00:00:00Z"));
		assertThat(StoredOverrides.decode("api", "alice", StoredOverrides.encode(override))).isEqualTo(override);
	}

	@Test
	void anOverrideWithoutExpiryOrLimitsReadsBackEqual() {
		LimitOverride unlimited = new LimitOverride("api", "vip", List.of(), null);
		assertThat(StoredOverrides.decode("api", "vip", StoredOverrides.encode(unlimited))).isEqualTo(unlimited);
	}

	@Test
	void anUnknownFormatIsRefusedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> StoredOverrides.decode("api", "vip", "v9 -"))
			.withMessageContaining("Unknown override format 'v9 -'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> StoredOverrides.decode("api", "vip", "v1 -\nalgorithm=token-bucket"))
			.withMessageContaining("lacks 'rate'");
	}

}
