package dev.ratelimit.spring.autoconfigure;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.WindowAlignment;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A limit given at run time, such as in an override's body, takes a calendar alignment
 * and zone as YAML does, and names them when they are wrong.
 */
class LimitSpecParserTests {

	@Test
	void readsACalendarQuota() {
		List<Limit> limits = LimitSpecParser.parse(List
			.of(Map.of("algorithm", "fixed-window", "rate", "100000/1mo", "align", "calendar", "zone", "Europe/Paris")),
				"limits");
		assertThat(limits).containsExactly(Limit.builder(Algorithm.FIXED_WINDOW)
			.rate("100000/1mo")
			.align(WindowAlignment.CALENDAR)
			.zone("Europe/Paris")
			.build());
	}

	@Test
	void namesAnUnknownZoneAndAMonthWithoutCalendarAlignment() {
		RateLimitConfigurationException exception = catchThrowableOfType(RateLimitConfigurationException.class,
				() -> LimitSpecParser.parse(List.of(Map.of("algorithm", "fixed-window", "rate", "10/1d", "align",
						"calendar", "zone", "Nowhere/City"), Map.of("algorithm", "fixed-window", "rate", "10/1mo")),
						"limits"));
		assertThat(exception.getProblems()).extracting(Problem::property)
			.containsExactly("limits[0].zone", "limits[1].rate");
		assertThat(exception.getProblems().get(0).reason()).contains("Unknown time zone 'Nowhere/City'");
	}

}
