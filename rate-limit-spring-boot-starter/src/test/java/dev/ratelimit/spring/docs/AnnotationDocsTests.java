package dev.ratelimit.spring.docs;

import java.time.Duration;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.autoconfigure.RateLimitAnnotationAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The three uses of {@code @RateLimited} that docs/ANNOTATION.md shows (example
 * {@code annotations}), on the methods of a plain bean, outside any web request: a
 * policy, a SpEL cost over the arguments, a SpEL key that overrides the policy's.
 */
class AnnotationDocsTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAnnotationAutoConfiguration.class))
		.withBean(MutableTimeSource.class, MutableTimeSource::new)
		.withBean(Geocoder.class)
		.withPropertyValues("ratelimit.policies.geocode-burst.key=global",
				"ratelimit.policies.geocode-burst.limits[0].rate=5/1s",
				"ratelimit.policies.geocode-burst.limits[0].capacity=10", "ratelimit.policies.batch.key=global",
				"ratelimit.policies.batch.limits[0].rate=10/1m", "ratelimit.policies.per-user.key=global",
				"ratelimit.policies.per-user.limits[0].rate=2/1m");

	@Test
	void theDocShowsTheAnnotationsOfThisClass() {
		assertThat(DocExamples.codeMissingFrom(AnnotationDocsTests.class, "docs/ANNOTATION.md", "annotations"))
			.isEmpty();
	}

	@Test
	void aPolicyLimitsTheMethodAndARejectedCallThrowsWithTheDecision() {
		this.runner.run((context) -> {
			Geocoder geocoder = context.getBean(Geocoder.class);
			for (int i = 0; i < 10; i++) {
				geocoder.geocode("Rabat");
			}
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> geocoder.geocode("Rabat"))
				.satisfies((rejected) -> {
					assertThat(rejected.getDecision().isAllowed()).isFalse();
					assertThat(rejected.getDecision().retryAfter()).isEqualTo(Duration.ofMillis(200));
				});
		});
	}

	@Test
	void aSpelCostChargesOnePermitPerQuery() {
		this.runner.run((context) -> {
			Geocoder geocoder = context.getBean(Geocoder.class);
			geocoder.batch(Collections.nCopies(4, "Rabat"));
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> geocoder.batch(Collections.nCopies(7, "Rabat")));
			assertThat(geocoder.batch(Collections.nCopies(6, "Rabat"))).hasSize(6);
		});
	}

	@Test
	void aSpelKeyOverridesThePolicysKeySoEachUserHasItsOwnPermits() {
		this.runner.run((context) -> {
			Geocoder geocoder = context.getBean(Geocoder.class);
			geocoder.history("42");
			geocoder.history("42");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> geocoder.history("42"));
			// the policy's own key is global: without the annotation's key, user 43
			// would be refused too
			assertThat(geocoder.history("43")).isEqualTo("history of 43");
		});
	}

	static class Geocoder {

		@RateLimited("geocode-burst")
		public String geocode(String query) {
			return query;
		}

		@RateLimited(policy = "batch", cost = "#{#queries.size()}")
		public List<String> batch(List<String> queries) {
			return queries;
		}

		@RateLimited(policy = "per-user", key = "#{#userId}")
		public String history(String userId) {
			return "history of " + userId;
		}

	}

}
