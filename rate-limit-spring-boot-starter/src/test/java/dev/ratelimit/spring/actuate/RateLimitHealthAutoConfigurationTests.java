package dev.ratelimit.spring.actuate;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitHealthAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitHealthAutoConfiguration} and the health of the in-memory backend.
 */
class RateLimitHealthAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitHealthAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=2/1m");

	@Test
	void contributesRateLimitHealthThatIsUpWithTheInMemoryBackendsDetails() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitHealthIndicator.class).hasBean("rateLimitHealthIndicator");
			Health health = context.getBean(RateLimitHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("backend", "memory")
				.containsEntry("failureMode", "allow")
				.containsEntry("keys", 0L);
		});
	}

	@Test
	void backsOffWithoutBootHealth() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitService.class)
				.doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	@Test
	void backsOffForTheUsersOwnIndicator() {
		this.runner
			.withBean("rateLimitHealthIndicator", RateLimitHealthIndicator.class,
					() -> new RateLimitHealthIndicator(InMemoryRateLimiter.builder().build(), "own", FailureMode.DENY))
			.run((context) -> assertThat(context.getBean(RateLimitHealthIndicator.class).health().getDetails())
				.containsEntry("backend", "own"));
	}

	@Test
	void isOffWhenItsHealthIndicatorIsDisabled() {
		this.runner.withPropertyValues("management.health.ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	@Test
	void isOffWhenRateLimitingIsDisabled() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitHealthIndicator.class));
	}

}
