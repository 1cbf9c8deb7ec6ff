package dev.ratelimit.core;

import java.time.Duration;
import java.time.ZoneId;
import java.util.stream.Stream;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.ratelimit.core.Limit.Parameter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Every check of a limit's values throws an {@link InvalidLimitException} that names the
 * parameter at fault, so that the starter names the property without reading the message.
 */
class InvalidLimitExceptionTest {

	static Stream<Arguments> invalidLimits() {
		Duration second = Duration.ofSeconds(1);
		return Stream.of(
				arguments("a concurrency limit with a rate", Parameter.RATE, Rate.parse("5/1s"),
						build(Limit.builder(Algorithm.CONCURRENCY).rate("5/1s").max(3))),
				arguments("a concurrency limit with initial", Parameter.INITIAL, 1L,
						build(Limit.builder(Algorithm.CONCURRENCY).max(3).initial(1))),
				arguments("a concurrency limit without max", Parameter.MAX, null,
						build(Limit.builder(Algorithm.CONCURRENCY))),
				arguments("a concurrency limit of max 0", Parameter.MAX, 0L,
						(ThrowingCallable) () -> Limit.concurrency(0)),
				arguments("a concurrency limit above the most", Parameter.MAX, Limit.MAX_CONCURRENCY + 1,
						(ThrowingCallable) () -> Limit.concurrency(Limit.MAX_CONCURRENCY + 1)),
				arguments("a lease time of zero", Parameter.LEASE_TIME, Duration.ZERO,
						build(Limit.builder(Algorithm.CONCURRENCY).max(3).leaseTime(Duration.ZERO))),
				arguments("a lease time too long", Parameter.LEASE_TIME, Duration.ofDays(200_000_000L),
						build(Limit.builder(Algorithm.CONCURRENCY).max(3).leaseTime(Duration.ofDays(200_000_000L)))),
				arguments("a window without a rate", Parameter.RATE, null,
						build(Limit.builder(Algorithm.FIXED_WINDOW))),
				arguments("a lease time on a token bucket", Parameter.LEASE_TIME, second,
						build(Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").leaseTime(second))),
				arguments("a capacity on a window", Parameter.CAPACITY, 10L,
						build(Limit.builder(Algorithm.FIXED_WINDOW).rate("5/1s").capacity(10))),
				arguments("a negative capacity", Parameter.CAPACITY, -1L,
						build(Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").capacity(-1))),
				arguments("initial tokens on a leaky bucket", Parameter.INITIAL, 1L,
						build(Limit.builder(Algorithm.LEAKY_BUCKET).rate("5/1s").initial(1))),
				arguments("initial tokens above the capacity", Parameter.INITIAL, 11L,
						build(Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").capacity(10).initial(11))),
				arguments("a mode on a token bucket", Parameter.MODE, LeakMode.SHAPE,
						build(Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").mode(LeakMode.SHAPE))),
				arguments("a max-wait on a policing leaky bucket", Parameter.MAX_WAIT, second,
						build(Limit.builder(Algorithm.LEAKY_BUCKET).rate("5/1s").maxWait(second))),
				arguments("a max-wait on a token bucket", Parameter.MAX_WAIT, second,
						build(Limit.builder(Algorithm.TOKEN_BUCKET).rate("5/1s").maxWait(second))),
				arguments("a negative max-wait", Parameter.MAX_WAIT, second.negated(),
						build(Limit.builder(Algorithm.LEAKY_BUCKET)
							.rate("5/1s")
							.mode(LeakMode.SHAPE)
							.maxWait(second.negated()))),
				arguments("a rate that does not parse", Parameter.RATE, "0/1s",
						(ThrowingCallable) () -> Limit.builder(Algorithm.TOKEN_BUCKET).rate("0/1s")),
				arguments("an unknown algorithm", Parameter.ALGORITHM, "gcra",
						(ThrowingCallable) () -> Algorithm.fromConfigName("gcra")),
				arguments("an unknown leaky-bucket mode", Parameter.MODE, "queue",
						(ThrowingCallable) () -> LeakMode.fromConfigName("queue")),
				arguments("a period in months without calendar alignment", Parameter.RATE, Rate.parse("100/1mo"),
						build(Limit.builder(Algorithm.FIXED_WINDOW).rate("100/1mo"))),
				arguments("a period in months on a token bucket", Parameter.RATE, Rate.parse("100/1mo"),
						build(Limit.builder(Algorithm.TOKEN_BUCKET).rate("100/1mo"))),
				arguments("a calendar window of two days", Parameter.RATE, Rate.parse("100/2d"),
						build(Limit.builder(Algorithm.FIXED_WINDOW).rate("100/2d").align(WindowAlignment.CALENDAR))),
				arguments("a calendar window of two months", Parameter.RATE, Rate.parse("100/2mo"),
						build(Limit.builder(Algorithm.FIXED_WINDOW).rate("100/2mo").align(WindowAlignment.CALENDAR))),
				arguments("a calendar window of an hour", Parameter.RATE, Rate.parse("100/1h"),
						build(Limit.builder(Algorithm.FIXED_WINDOW).rate("100/1h").align(WindowAlignment.CALENDAR))),
				arguments("calendar alignment on a token bucket", Parameter.ALIGN, WindowAlignment.CALENDAR,
						build(Limit.builder(Algorithm.TOKEN_BUCKET).rate("100/1d").align(WindowAlignment.CALENDAR))),
				arguments("calendar alignment on a concurrency limit", Parameter.ALIGN, WindowAlignment.CALENDAR,
						build(Limit.builder(Algorithm.CONCURRENCY).max(3).align(WindowAlignment.CALENDAR))),
				arguments("a zone on a window aligned to the epoch", Parameter.ZONE, ZoneId.of("Europe/Paris"),
						build(Limit.builder(Algorithm.FIXED_WINDOW).rate("100/1d").zone(ZoneId.of("Europe/Paris")))),
				arguments("an unknown zone", Parameter.ZONE, "Europe/Pariss",
						(ThrowingCallable) () -> Limit.builder(Algorithm.FIXED_WINDOW).zone("Europe/Pariss")),
				arguments("an unknown alignment", Parameter.ALIGN, "monthly",
						(ThrowingCallable) () -> WindowAlignment.fromConfigName("monthly")));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("invalidLimits")
	void namesTheParameterWhoseValueIsWrongAndTheValue(String description, Parameter parameter, Object value,
			ThrowingCallable invalid) {
		InvalidLimitException exception = catchThrowableOfType(InvalidLimitException.class, invalid);
		assertThat(exception.parameter()).as(description).isEqualTo(parameter);
		assertThat(exception.value()).isEqualTo(value);
		assertThat(exception).isInstanceOf(IllegalArgumentException.class);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "5", "x/1s", "0/1s", "9007199254740993/1s", "99999999999999999999/1s", "5/", "5/PTxx",
			"5/1y", "5/0s", "5/1500ns", "5/999999999999999999d", "5/99999999999999999999s", "5/0mo", "5/4000mo",
			"5/9999999999mo" })
	void aRateThatDoesNotParseNamesTheRate(String text) {
		InvalidLimitException exception = catchThrowableOfType(InvalidLimitException.class, () -> Rate.parse(text));
		assertThat(exception.parameter()).isEqualTo(Parameter.RATE);
		assertThat(exception.value()).isEqualTo(text);
	}

	@Test
	void aRateOutOfRangeNamesTheRate() {
		InvalidLimitException exception = catchThrowableOfType(InvalidLimitException.class,
				() -> Rate.of(0, Duration.ofSeconds(1)));
		assertThat(exception.parameter()).isEqualTo(Parameter.RATE);
		assertThat(exception.value()).isEqualTo("0/PT1S");
	}

	@Test
	void limitsWhoseValuesAreEachValidButTooMuchTogetherNameNoParameter() {
		ThrowingCallable[] limits = { () -> Limit.tokenBucket("999999937/1d", 999_999_937),
				() -> Limit.slidingWindowCounter("1000000000/1d"), () -> Limit.slidingWindowLog("1000000/1h") };
		for (ThrowingCallable limit : limits) {
			InvalidLimitException exception = catchThrowableOfType(InvalidLimitException.class, limit);
			assertThat(exception.parameter()).isNull();
			assertThat(exception.value()).isNull();
		}
	}

	@Test
	void namesEachParameterAsConfigurationDoes() {
		assertThat(Stream.of(Parameter.values()).map(Parameter::configName)).containsExactly("algorithm", "rate",
				"capacity", "initial", "mode", "max-wait", "max", "lease-time", "align", "zone", "penalty");
	}

	private static ThrowingCallable build(Limit.Builder builder) {
		return builder::build;
	}

}
