package dev.ratelimit.core;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RateTest {

	@ParameterizedTest(name = "{0} = {1} per {2}us")
	@CsvSource({ "5/1s,          5, 1000000", "60/1m,         60, 60000000", "60/m,          60, 60000000",
			"1/10s,         1, 10000000", "100/500ms,     100, 500000", "1000/1h,       1000, 3600000000",
			"10/d,          10, 86400000000", "3/s,           3, 1000000", "7/250us,       7, 250",
			"' 5 / 1s ',    5, 1000000", "5/PT1M,        5, 60000000", "2/1S,          2, 1000000",
			"10/1w,         10, 604800000000", "10/w,          10, 604800000000", "10/2W,         10, 1209600000000" })
	void parsesTheRateNotation(String text, long permits, long periodMicros) {
		Rate rate = Rate.parse(text);
		assertThat(rate.permits()).isEqualTo(permits);
		assertThat(rate.periodMicros()).isEqualTo(periodMicros);
	}

	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			value = { "0/1s                       | the number of permits must be at least 1 (was 0)",
					"-1/1s                      | the number of permits must be at least 1 (was -1)",
					"5/0s                       | the period must be positive",
					"5/-1s                      | is not a period", "abc                        | expected N/PERIOD",
					"5                          | expected N/PERIOD", "5/1s/2                     | expected N/PERIOD",
					"x/1s                       | 'x' is not a whole number of permits",
					"99999999999999999999/1s    | permits is too large",
					"9007199254740993/1s        | must be at most 9007199254740992",
					"5/1 fortnight              | is not a period", "5/1y                       | unknown unit 'y'",
					"5/1y                       | use ns, us, ms, s, m, h, d, w or mo",
					"5/0mo                      | the period must be positive",
					"5/                         | the period is missing",
					"5/1500ns                   | whole number of microseconds",
					"5/999999999999999999d      | is too long",
					"5/PTxx                     | is not an ISO-8601 duration", })
	void rejectsAnInvalidRateWithAMessageNamingIt(String text, String message) {
		assertThatIllegalArgumentException().isThrownBy(() -> Rate.parse(text))
			.withMessageContaining(message)
			.withMessageContaining(text.trim());
	}

	@ParameterizedTest
	@CsvSource({ "100000/1mo, 1", "5/mo, 1", "5/3MO, 3" })
	void parsesAPeriodInMonthsAsMonthsOfTheEstimatedLength(String text, long months) {
		Rate rate = Rate.parse(text);
		assertThat(rate.months()).isEqualTo(months);
		assertThat(rate.period()).isEqualTo(ChronoUnit.MONTHS.getDuration().multipliedBy(months));
		assertThat(rate).hasToString(rate.permits() + "/" + months + "mo");
		assertThat(rate).isNotEqualTo(Rate.of(rate.permits(), rate.period()));
		assertThat(Rate.parse("5/1d").months()).isZero();
	}

	@ParameterizedTest
	@CsvSource({ "'' ", "'   '" })
	void rejectsAnEmptyRate(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> Rate.parse(text)).withMessageContaining("empty");
	}

	@ParameterizedTest
	@CsvSource({ "5/1s, 5/1s", "60/60s, 60/1m", "1/10s, 1/10s", "100/500ms, 100/500ms", "3/90m, 3/90m", "5/24h, 5/1d",
			"5/1w, 5/7d" })
	void printsTheRateWithTheLargestWholeUnit(String text, String printed) {
		assertThat(Rate.parse(text)).hasToString(printed);
	}

	@ParameterizedTest
	@CsvSource({ "60/1m, 60/60s", "5/1s, 5/1000ms" })
	void equalRatesAreEqual(String one, String other) {
		assertThat(Rate.parse(one)).isEqualTo(Rate.parse(other)).hasSameHashCodeAs(Rate.parse(other));
		assertThat(Rate.of(Rate.parse(one).permits(), Rate.parse(one).period())).isEqualTo(Rate.parse(other));
		assertThat(Rate.parse(one).period()).isEqualTo(Duration.ofNanos(Rate.parse(other).periodMicros() * 1000));
	}

}
