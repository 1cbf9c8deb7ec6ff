package dev.ratelimit.spring.docs;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.autoconfigure.RateLimitAnnotationAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitMetricsAutoConfiguration;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The YAML of docs/OBSERVABILITY.md that turns the rate-limit metrics off (example
 * {@code metrics-off}), read from the doc: decisions are made, and no meter records them.
 */
class MetricsDocsTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAnnotationAutoConfiguration.class,
						RateLimitMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
						CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
		.withBean(MutableTimeSource.class, MutableTimeSource::new)
		.withBean(Search.class)
		.withPropertyValues("ratelimit.policies.api.key=global", "ratelimit.policies.api.limits[0].rate=2/1m");

	@Test
	void theDocsYamlTurnsEveryRateLimitMeterOff() {
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(DocProperties.of("docs/OBSERVABILITY.md", "metrics-off")))
			.run((context) -> {
				decideThreeTimes(context.getBean(Search.class));
				assertThat(context.getBean(MeterRegistry.class).getMeters())
					.noneMatch((meter) -> meter.getId().getName().startsWith("ratelimit."));
			});
	}

	@Test
	void withoutItTheSameDecisionsAreCounted() {
		this.runner.run((context) -> {
			decideThreeTimes(context.getBean(Search.class));
			assertThat(context.getBean(MeterRegistry.class).get("ratelimit.requests").counters()).isNotEmpty();
		});
	}

	private static void decideThreeTimes(Search search) {
		search.search();
		search.search();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(search::search);
	}

	static class Search {

		@RateLimited("api")
		public String search() {
			return "ok";
		}

	}

}
