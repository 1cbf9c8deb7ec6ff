package dev.ratelimit.benchmarks.reliability;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate limiter's meters read from a Prometheus scrape.
 */
class AppMetricsTest {

	private static final AppMetrics SCRAPE = AppMetrics.parse("""
			# HELP ratelimit_requests_total
			# TYPE ratelimit_requests_total counter
			ratelimit_requests_total{outcome="allowed",policy="api",tier="anonymous"} 9.0
			ratelimit_requests_total{outcome="failed-open",policy="api",tier="anonymous"} 4.0
			ratelimit_requests_total{outcome="failed-open",policy="api",tier="free"} 1.0
			ratelimit_requests_total{outcome="failed-open",policy="backend-capacity",tier="free"} 7.0
			ratelimit_backend_failures_total{backend="redis",exception="TimeoutException"} 3.0
			ratelimit_backend_failures_total{backend="redis",exception="RedisConnectionException"} 2.0
			ratelimit_backend_failures_total{backend="redis",exception="none"} 0.0
			ratelimit_decision_seconds_bucket{backend="redis",le="0.089478485"} 10
			ratelimit_decision_seconds_bucket{backend="redis",le="0.111848106"} 12
			ratelimit_decision_seconds_bucket{backend="redis",le="+Inf"} 15
			ratelimit_decision_seconds_count{backend="redis"} 15
			jvm_threads_live_threads 28.0
			tomcat_threads_busy_threads{name="http-nio-23457"} 1.0
			""");

	@Test
	void sumsTheSeriesWhoseTagsMatch() {
		assertThat(SCRAPE.failedOpen()).isEqualTo(5);
		assertThat(SCRAPE.sum(AppMetrics.REQUESTS, Map.of("outcome", "failed-open"))).isEqualTo(12);
		assertThat(SCRAPE.liveThreads()).isEqualTo(28);
		assertThat(SCRAPE.busyRequestThreads()).isEqualTo(1);
	}

	@Test
	void countsBackendFailuresOfEveryExceptionButNone() {
		assertThat(SCRAPE.backendFailures()).isEqualTo(5);
	}

	@Test
	void countsTheDecisionsSlowerThanTheFirstBucketAtOrAboveATime() {
		double bucket = SCRAPE.decisionBucketAtLeast(0.110);
		assertThat(bucket).isEqualTo(0.111848106);
		assertThat(SCRAPE.decisionsAbove(bucket)).isEqualTo(3);
		assertThat(SCRAPE.decisionBucketAtLeast(5)).isInfinite();
	}

}
