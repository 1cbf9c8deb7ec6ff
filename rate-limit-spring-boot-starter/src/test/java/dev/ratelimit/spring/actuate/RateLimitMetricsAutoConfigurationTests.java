package dev.ratelimit.spring.actuate;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitMetricsAutoConfiguration;
import dev.ratelimit.spring.metrics.RateLimitKeysMeterBinder;
import dev.ratelimit.spring.metrics.RateLimitMetrics;
import dev.ratelimit.spring.testsupport.CountingRateLimiter;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitMetricsAutoConfiguration} with Boot's own metrics auto-configuration
 * and a simple registry.
 */
class RateLimitMetricsAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.key=global", "ratelimit.policies.api.limits[0].rate=2/1m");

	@Test
	void recordsDecisionsAndGaugesKeysWhenAMeterRegistryIsPresent() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitMetrics.class).hasSingleBean(RateLimitKeysMeterBinder.class);
			decide(context.getBean(RateLimitService.class), 3);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("ratelimit.requests").tag("outcome", "allowed").counter().count()).isEqualTo(2);
			assertThat(registry.get("ratelimit.requests").tag("outcome", "rejected").counter().count()).isEqualTo(1);
			assertThat(registry.get("ratelimit.keys").tag("backend", "memory").gauge().value()).isEqualTo(1);
		});
	}

	@Test
	void publishesADecisionHistogramToPrometheusThatBootsPropertyCanTurnOff() {
		ApplicationContextRunner prometheus = this.runner
			.withConfiguration(AutoConfigurations.of(PrometheusMetricsExportAutoConfiguration.class));
		prometheus.run((context) -> {
			decide(context.getBean(RateLimitService.class), 3);
			assertThat(context.getBean(PrometheusMeterRegistry.class).scrape())
				.contains("ratelimit_requests_total{outcome=\"allowed\",policy=\"api\",tier=\"free\"} 2.0")
				.contains("ratelimit_requests_total{outcome=\"rejected\",policy=\"api\",tier=\"free\"} 1.0")
				.contains("ratelimit_decision_seconds_count{backend=\"memory\"} 3")
				.contains("ratelimit_decision_seconds_bucket{backend=\"memory\",le=")
				.contains("ratelimit_backend_failures_total{backend=\"memory\",exception=\"none\"} 0.0")
				.contains("ratelimit_keys{backend=\"memory\"} 1.0");
		});
		prometheus.withPropertyValues("management.metrics.distribution.percentiles-histogram.ratelimit.decision=false")
			.run((context) -> assertThat(context.getBean(PrometheusMeterRegistry.class).scrape())
				.contains("ratelimit_decision_seconds_count")
				.doesNotContain("ratelimit_decision_seconds_bucket"));
	}

	@Test
	void recordsNothingWhenBootsEnablePropertyTurnsRateLimitMetricsOff() {
		this.runner.withPropertyValues("management.metrics.enable.ratelimit=false").run((context) -> {
			decide(context.getBean(RateLimitService.class), 3);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.getMeters()).noneMatch((meter) -> meter.getId().getName().startsWith("ratelimit."));
			assertThat(registry.find("ratelimit.requests").counters()).isEmpty();
		});
	}

	@Test
	void doesNotGaugeKeysOfABackendThatIsNotInMemory() {
		this.runner
			.withBean(CountingRateLimiter.class, () -> new CountingRateLimiter(InMemoryRateLimiter.builder().build()))
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitMetrics.class)
					.doesNotHaveBean(RateLimitKeysMeterBinder.class);
				assertThat(context.getBean(MeterRegistry.class).find("ratelimit.keys").gauge()).isNull();
			});
	}

	@Test
	void backsOffWithoutMicrometer() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class))
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=2/1m")
			.withBean(SimpleMeterRegistry.class)
			.withClassLoader(new FilteredClassLoader("io.micrometer.core"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitService.class)
				.doesNotHaveBean(RateLimitMetrics.class));
	}

	@Test
	void backsOffWithoutAMeterRegistry() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class))
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=2/1m")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitService.class)
				.doesNotHaveBean(RateLimitMetrics.class));
	}

	@Test
	void backsOffForTheUsersOwnRecorder() {
		RateLimitMetrics own = new RateLimitMetrics(new SimpleMeterRegistry(), new PolicyRegistry(List.of(), "free"),
				"memory");
		this.runner.withBean("ownMetrics", RateLimitMetrics.class, () -> own)
			.run((context) -> assertThat(context).getBean(RateLimitMetrics.class).isSameAs(own));
	}

	@Test
	void isOffWhenRateLimitingIsDisabled() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitService.class)
				.doesNotHaveBean(RateLimitMetrics.class)
				.doesNotHaveBean(RateLimitKeysMeterBinder.class));
	}

	private static void decide(RateLimitService service, int calls) {
		for (int i = 0; i < calls; i++) {
			service.decide(List.of("api"), 1,
					RateLimitContext.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null));
		}
	}

}
