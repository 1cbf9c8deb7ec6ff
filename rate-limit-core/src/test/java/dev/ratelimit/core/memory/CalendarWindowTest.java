package dev.ratelimit.core.memory;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.WindowAlignment;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fixed windows aligned to the calendar, on a manual clock: each window starts at
 * midnight in its zone, lasts a real day, week or month, and the reset and retry-after
 * count to that boundary.
 */
class CalendarWindowTest {

	private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

	private static final ZoneId UTC = ZoneId.of("UTC");

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	@Test
	void aMonthlyQuotaEndsOnTheLastDayOfTheMonthAndCountsAfreshOnTheFirst() {
		KeyedLimit monthly = calendar("3/1mo", PARIS);
		set("2027-01-31T23:59:59", PARIS);
		takeAll(monthly, 3);
		Decision rejected = acquire(monthly);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfter()).as("until midnight in Paris").isEqualTo(Duration.ofSeconds(1));
		assertThat(rejected.resetAfter()).isEqualTo(Duration.ofSeconds(1));
		set("2027-02-01T00:00", PARIS);
		Decision february = acquire(monthly);
		assertThat(february.isAllowed()).isTrue();
		assertThat(february.remaining()).isEqualTo(2);
		assertThat(february.resetAfter()).as("February 2027 has 28 days").isEqualTo(Duration.ofDays(28));
	}

	@Test
	void aMonthStartsAtMidnightInItsZoneNotInUtc() {
		KeyedLimit monthly = calendar("1/1mo", PARIS);
		set("2027-01-31T23:30", UTC);
		Decision february = acquire(monthly);
		assertThat(february.isAllowed()).as("already February 1st, 00:30 in Paris").isTrue();
		assertThat(february.resetAfter()).isEqualTo(Duration.ofDays(28).minusMinutes(30));
		set("2027-02-28T22:59:59", UTC);
		assertThat(acquire(monthly).retryAfter()).as("until March 1st, 00:00 in Paris (23:00 UTC)")
			.isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void aLeapDayIsADayOfItsOwnInAMonthOfTwentyNineDays() {
		KeyedLimit daily = calendar("1/1d", UTC);
		KeyedLimit monthly = calendar("2/1mo", UTC);
		set("2028-02-01T00:00", UTC);
		assertThat(acquire(monthly).resetAfter()).as("February 2028 has 29 days").isEqualTo(Duration.ofDays(29));
		set("2028-02-28T18:00", UTC);
		assertThat(acquire(daily).resetAfter()).isEqualTo(Duration.ofHours(6));
		assertThat(acquire(daily).retryAfter()).as("until the leap day").isEqualTo(Duration.ofHours(6));
		set("2028-02-29T00:00", UTC);
		Decision leapDay = acquire(daily);
		assertThat(leapDay.isAllowed()).isTrue();
		assertThat(leapDay.resetAfter()).isEqualTo(Duration.ofDays(1));
		set("2028-02-29T12:00", UTC);
		assertThat(acquire(monthly).isAllowed()).isTrue();
		Decision spent = acquire(monthly);
		assertThat(spent.isAllowed()).isFalse();
		assertThat(spent.retryAfter()).as("until March 1st").isEqualTo(Duration.ofHours(12));
		set("2028-03-01T00:00", UTC);
		assertThat(acquire(daily).isAllowed()).isTrue();
		Decision march = acquire(monthly);
		assertThat(march.isAllowed()).isTrue();
		assertThat(march.resetAfter()).isEqualTo(Duration.ofDays(31));
	}

	@Test
	void theDayDaylightSavingTimeBeginsHasTwentyThreeHours() {
		KeyedLimit daily = calendar("2/1d", PARIS);
		set("2027-03-28T00:00", PARIS);
		Decision first = acquire(daily);
		assertThat(first.resetAfter()).isEqualTo(Duration.ofHours(23));
		set("2027-03-28T23:59:59", PARIS);
		acquire(daily);
		Decision rejected = acquire(daily);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(1));
		set("2027-03-29T00:00", PARIS);
		Decision nextDay = acquire(daily);
		assertThat(nextDay.isAllowed()).isTrue();
		assertThat(nextDay.resetAfter()).isEqualTo(Duration.ofHours(24));
	}

	@Test
	void theDayDaylightSavingTimeEndsHasTwentyFiveHours() {
		KeyedLimit daily = calendar("1/1d", PARIS);
		set("2027-10-31T00:00", PARIS);
		assertThat(acquire(daily).resetAfter()).isEqualTo(Duration.ofHours(25));
		// 02:30 happens twice that night: the second one (UTC+1) is 21.5 hours from the
		// end
		this.clock.set(micros(LocalDateTime.parse("2027-10-31T02:30").atZone(PARIS).withLaterOffsetAtOverlap()));
		assertThat(acquire(daily).retryAfter()).isEqualTo(Duration.ofMinutes(21 * 60 + 30));
		set("2027-11-01T00:00", PARIS);
		assertThat(acquire(daily).isAllowed()).isTrue();
	}

	@Test
	void aWeekStartsOnMonday() {
		KeyedLimit weekly = calendar("1/1w", UTC);
		set("2027-01-06T12:00", UTC);
		Decision wednesday = acquire(weekly);
		assertThat(wednesday.isAllowed()).isTrue();
		assertThat(wednesday.resetAfter()).as("until Monday the 11th").isEqualTo(Duration.ofHours(4 * 24 + 12));
		set("2027-01-10T23:59:59", UTC);
		assertThat(acquire(weekly).retryAfter()).isEqualTo(Duration.ofSeconds(1));
		set("2027-01-11T00:00", UTC);
		assertThat(acquire(weekly).isAllowed()).isTrue();
	}

	@Test
	void aWeekWithTheChangeToSummerTimeHasOneHourLess() {
		KeyedLimit weekly = calendar("1/1w", PARIS);
		set("2027-03-22T00:00", PARIS);
		assertThat(acquire(weekly).resetAfter()).isEqualTo(Duration.ofHours(7 * 24 - 1));
	}

	@Test
	void anEpochAlignedWindowOfADayStaysTwentyFourHoursFromMidnightUtc() {
		KeyedLimit rolling = new KeyedLimit("daily", "alice", Limit.fixedWindow("1/1d"));
		set("2027-03-28T00:00", PARIS);
		assertThat(acquire(rolling).resetAfter()).as("until midnight UTC, 01:00 in Paris in winter")
			.isEqualTo(Duration.ofHours(1));
	}

	private static KeyedLimit calendar(String rate, ZoneId zone) {
		// named by rate: the daily and the monthly quota of one test are two limits
		return new KeyedLimit("quota", "alice", "per-" + rate.substring(rate.indexOf('/') + 1),
				Limit.builder(Algorithm.FIXED_WINDOW).rate(rate).align(WindowAlignment.CALENDAR).zone(zone).build());
	}

	private void takeAll(KeyedLimit limit, int permits) {
		for (int i = 0; i < permits; i++) {
			assertThat(acquire(limit).isAllowed()).isTrue();
		}
	}

	private Decision acquire(KeyedLimit limit) {
		return this.limiter.acquire(List.of(limit), 1);
	}

	private void set(String localTime, ZoneId zone) {
		this.clock.set(micros(LocalDateTime.parse(localTime).atZone(zone)));
	}

	private static long micros(ZonedDateTime time) {
		return time.toInstant().getEpochSecond() * 1_000_000L + time.toInstant().getNano() / 1000;
	}

}
