package dev.ratelimit.core;

import java.time.Duration;
import java.time.ZoneId;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LimitTest {

	@Test
	void defaultsCapacityAndInitialTokensToThePermitsOfTheRate() {
		Limit limit = Limit.tokenBucket("60/1m");
		assertThat(limit.capacity()).isEqualTo(60);
		assertThat(limit.initial()).isEqualTo(60);
		assertThat(limit.windowMicros()).isEqualTo(60_000_000);
		assertThat(limit.retentionMicros()).isEqualTo(60_000_000);
	}

	@Test
	void reducesTheRateToUnitsByTheGreatestCommonDivisor() {
		Limit limit = Limit.tokenBucket("5/1s", 10);
		assertThat(limit.unitsPerMicro()).isEqualTo(1);
		assertThat(limit.unitsPerPermit()).isEqualTo(200_000);
		assertThat(limit.windowMicros()).isEqualTo(2_000_000);
		Limit thirds = Limit.tokenBucket("3/1s");
		assertThat(thirds.unitsPerMicro()).isEqualTo(3);
		assertThat(thirds.unitsPerPermit()).isEqualTo(1_000_000);
	}

	@Test
	void keepsAPartlyFilledBucketForADayAfterItWouldBeFull() {
		Limit limit = Limit.builder(Algorithm.TOKEN_BUCKET).rate("2/1s").capacity(5).initial(0).build();
		assertThat(limit.retentionMicros()).isEqualTo(2_500_000 + 86_400_000_000L);
	}

	@Test
	void keepsASlidingCounterForTwoWindows() {
		assertThat(Limit.slidingWindowCounter("10/1m").retentionMicros()).isEqualTo(120_000_000);
	}

	@Test
	void rejectsANegativeCapacity() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").capacity(-1).build())
			.withMessage("'capacity' of a token-bucket limit must be between 1 and 9007199254740992 (was -1)");
	}

	@Test
	void rejectsInitialTokensAboveCapacity() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").capacity(10).initial(11).build())
			.withMessageContaining("'initial'")
			.withMessageContaining("(was 11)");
	}

	@Test
	void rejectsALimitWithoutRate() {
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.builder(Algorithm.FIXED_WINDOW).build())
			.withMessageContaining("needs 'rate'");
	}

	@Test
	void rejectsAConcurrencyLimitWithARate() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.CONCURRENCY).rate("5/1s").max(3).build())
			.withMessageStartingWith("'rate' does not apply to a concurrency limit, which takes 'max'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.CONCURRENCY).max(3).initial(1).build())
			.withMessage("'initial' applies to token buckets only, not to a concurrency limit");
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.builder(Algorithm.CONCURRENCY).build())
			.withMessageContaining("needs 'max'");
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.concurrency(0))
			.withMessageContaining("'max' of a concurrency limit must be between 1");
	}

	@Test
	void rejectsMaxWaitWithoutShaping() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.LEAKY_BUCKET).rate("5/1s").maxWait(Duration.ofSeconds(1)).build())
			.withMessageContaining("'max-wait' applies to a leaky-bucket with mode 'shape' only");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").maxWait(Duration.ofSeconds(1)).build())
			.withMessageContaining("'max-wait'");
	}

	@Test
	void rejectsParametersThatDoNotBelongToTheAlgorithm() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.FIXED_WINDOW).rate("5/1s").capacity(10).build())
			.withMessageContaining("'capacity' applies to token and leaky buckets only");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.LEAKY_BUCKET).rate("5/1s").initial(1).build())
			.withMessageContaining("'initial' applies to token buckets only");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").mode(LeakMode.SHAPE).build())
			.withMessageContaining("'mode' applies to leaky buckets only");
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").leaseTime(Duration.ofSeconds(1)).build())
			.withMessageContaining("'lease-time' applies to concurrency limits only");
	}

	@Test
	void rejectsLimitsTooFineGrainedToCountExactly() {
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.tokenBucket("999999937/1d", 999_999_937))
			.withMessageContaining("too fine-grained");
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.slidingWindowCounter("1000000000/1d"))
			.withMessageContaining("too large to weigh exactly");
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.slidingWindowLog("1000000/1h"))
			.withMessageContaining("at most 100000");
	}

	@Test
	void acceptsLargeRatesAndLongPeriodsThatStayExact() {
		assertThat(Limit.tokenBucket("1000000/1d").unitsPerPermit()).isEqualTo(86_400);
		assertThat(Limit.tokenBucket("1000000000/1s").unitsPerPermit()).isEqualTo(1);
		assertThat(Limit.slidingWindowCounter("1000000/1h").capacity()).isEqualTo(1_000_000);
		assertThat(Limit.fixedWindow("1000000000/1d").capacity()).isEqualTo(1_000_000_000);
	}

	@Test
	void namesAlgorithmsAndModesAsConfigurationDoes() {
		assertThat(Algorithm.fromConfigName("sliding-window-counter")).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
		assertThat(Algorithm.fromConfigName("TOKEN_BUCKET")).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThatIllegalArgumentException().isThrownBy(() -> Algorithm.fromConfigName("gcra"))
			.withMessageContaining("Unknown algorithm 'gcra'")
			.withMessageContaining("token-bucket, leaky-bucket");
		assertThat(LeakMode.fromConfigName("shape")).isEqualTo(LeakMode.SHAPE);
		assertThat(FailureMode.fromConfigName("local")).isEqualTo(FailureMode.LOCAL);
		assertThatIllegalArgumentException().isThrownBy(() -> FailureMode.fromConfigName("retry"))
			.withMessageContaining("'retry'");
	}

	@Test
	void equalParametersMakeEqualLimits() {
		Limit one = Limit.tokenBucket("5/1s", 10);
		Limit same = Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1000ms").capacity(10).initial(10).build();
		assertThat(one).isEqualTo(same).hasSameHashCodeAs(same);
		assertThat(Limit.tokenBucket("5/1s", 11)).isNotEqualTo(one);
		assertThat(Limit.fixedWindow("5/1s")).isNotEqualTo(Limit.slidingWindowLog("5/1s"));
	}

	@Test
	void printsTheLimitAsItWouldBeConfigured() {
		assertThat(Limit.tokenBucket("5/1s", 10)).hasToString("token-bucket 5/1s capacity=10");
		assertThat(Limit.builder(Algorithm.LEAKY_BUCKET)
			.rate("100/1s")
			.mode(LeakMode.SHAPE)
			.maxWait(Duration.ofMillis(500))
			.build()).hasToString("leaky-bucket 100/1s capacity=100 mode=shape max-wait=500ms");
		assertThat(Limit.concurrency(3)).hasToString("concurrency max=3 lease-time=1m");
	}

	@Test
	void alignsAFixedWindowToTheCalendarOfAZone() {
		Limit monthly = Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("100000/1mo")
			.align(WindowAlignment.CALENDAR)
			.zone("Europe/Paris")
			.build();
		assertThat(monthly.alignment()).isEqualTo(WindowAlignment.CALENDAR);
		assertThat(monthly.zone()).isEqualTo(ZoneId.of("Europe/Paris"));
		assertThat(monthly.capacity()).isEqualTo(100_000);
		assertThat(monthly.windowMicros()).as("the nominal month").isEqualTo(2_629_746_000_000L);
		assertThat(monthly.retentionMicros()).as("a day more than the nominal month, more than 31 days and an hour")
			.isEqualTo(2_629_746_000_000L + 86_400_000_000L);
		assertThat(monthly).hasToString("fixed-window 100000/1mo align=calendar zone=Europe/Paris");
		Limit daily = Limit.builder(Algorithm.FIXED_WINDOW).rate("10/1d").align(WindowAlignment.CALENDAR).build();
		assertThat(daily.zone()).as("the default zone").isEqualTo(ZoneId.of("UTC"));
		assertThat(Limit.builder(Algorithm.FIXED_WINDOW).rate("10/1w").align(WindowAlignment.CALENDAR).build())
			.hasToString("fixed-window 10/7d align=calendar zone=UTC");
		assertThat(Limit.fixedWindow("10/1d").alignment()).isEqualTo(WindowAlignment.EPOCH);
		assertThat(Limit.fixedWindow("10/1w").windowMicros()).as("a fixed week of seven days")
			.isEqualTo(604_800_000_000L);
	}

	@Test
	void theAlignmentAndZoneTellLimitsApart() {
		Limit paris = Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("10/1d")
			.align(WindowAlignment.CALENDAR)
			.zone(ZoneId.of("Europe/Paris"))
			.build();
		Limit sameParis = Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("10/24h")
			.align(WindowAlignment.CALENDAR)
			.zone(" Europe/Paris ")
			.build();
		Limit utc = Limit.builder(Algorithm.FIXED_WINDOW).rate("10/1d").align(WindowAlignment.CALENDAR).build();
		Limit epoch = Limit.fixedWindow("10/1d");
		assertThat(paris).isEqualTo(sameParis).hasSameHashCodeAs(sameParis);
		assertThat(Stream.of(paris, utc, epoch).distinct()).hasSize(3);
		assertThat(Limit.builder(Algorithm.FIXED_WINDOW).rate("10/1d").align(WindowAlignment.EPOCH).build())
			.isEqualTo(epoch);
	}

	@Test
	void rejectsCalendarSettingsThatDoNotFit() {
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.fixedWindow("100/1mo"))
			.withMessageContaining("A period in months (rate 100/1mo) has no fixed length")
			.withMessageContaining("'align: calendar'");
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> Limit.builder(Algorithm.FIXED_WINDOW).rate("100/2d").align(WindowAlignment.CALENDAR).build())
			.withMessageContaining("its period must be 1d, 1w or 1mo (rate was 100/2d)");
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("100/1d").align(WindowAlignment.CALENDAR).build())
			.withMessageContaining("'align: calendar' applies to fixed-window limits only, not to a token-bucket");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.FIXED_WINDOW).zone("Mars/Olympus_Mons"))
			.withMessageContaining("Unknown time zone 'Mars/Olympus_Mons'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder(Algorithm.FIXED_WINDOW).rate("1/1d").zone("UTC").build())
			.withMessageContaining("'zone' applies to a fixed-window limit with 'align: calendar' only");
	}

	@Test
	void aPenaltyIsPartOfTheLimitAndMustBePositive() {
		Limit penalized = Limit.builder(Algorithm.FIXED_WINDOW).rate("5/15m").penalty(Duration.ofMinutes(15)).build();
		assertThat(penalized.penaltyMicros()).isEqualTo(Duration.ofMinutes(15).toNanos() / 1000);
		assertThat(penalized).hasToString("fixed-window 5/15m penalty=15m");
		assertThat(Limit.concurrency(2).penaltyMicros()).isZero();
		assertThat(penalized).isNotEqualTo(Limit.fixedWindow("5/15m"))
			.isEqualTo(Limit.builder(Algorithm.FIXED_WINDOW).rate("5/15m").penalty(Duration.ofMinutes(15)).build())
			.hasSameHashCodeAs(
					Limit.builder(Algorithm.FIXED_WINDOW).rate("5/15m").penalty(Duration.ofMinutes(15)).build());
		assertThat(Limit.builder(Algorithm.CONCURRENCY).max(2).penalty(Duration.ofSeconds(30)).build())
			.hasToString("concurrency max=2 lease-time=1m penalty=30s");
		assertThatExceptionOfType(InvalidLimitException.class)
			.isThrownBy(() -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").penalty(Duration.ZERO).build())
			.withMessage("'penalty' of a token-bucket limit must be positive (was PT0S)")
			.satisfies((ex) -> assertThat(ex.parameter()).isEqualTo(Limit.Parameter.PENALTY));
	}

}
