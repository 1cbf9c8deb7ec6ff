package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import dev.ratelimit.core.memory.InMemoryRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Configurations the configuration fuzz (ConfigurationFuzz) found failing start-up
 * without naming a property: each now starts, or fails naming the property it got wrong.
 */
class FuzzFindingsTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class, AopAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s");

	@ParameterizedTest
	@ValueSource(strings = { "ratelimit.backend=\"memory\"", "ratelimit.backend= memory", "ratelimit.backend=MEMORY",
			"ratelimit.backend=memory;", "ratelimit.backend=" })
	void aBackendThatBindsToMemoryStartsInMemory(String property) {
		this.runner.withPropertyValues(property)
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(InMemoryRateLimiter.class));
	}

	@ParameterizedTest
	@ValueSource(strings = { "ratelimit.backend=mongo", "ratelimit.backend=redis-cluster" })
	void aBackendThatBindsToNoneFailsNamingIt(String property) {
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			BindException binding = null;
			for (Throwable cause = context.getStartupFailure(); cause != null; cause = cause.getCause()) {
				if (cause instanceof BindException found) {
					binding = found;
				}
			}
			assertThat(binding).as("a binding failure, which Boot's failure analyzer reports").isNotNull();
			assertThat(binding.getName()).hasToString("ratelimit.backend");
		});
	}

	@Test
	void failsStartUpNamingAKeyExpressionNestedTooDeeplyToParse() {
		this.runner.withPropertyValues("ratelimit.policies.api.key=#{" + "[".repeat(3000) + "}")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.policies.api.key",
					"nested too deeply"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "/a{id:[}", "/x{id:*}" })
	void failsStartUpNamingAPathPatternWhoseCaptureRegexDoesNotCompile(String pattern) {
		this.runner.withPropertyValues("ratelimit.filters[0].patterns=" + pattern, "ratelimit.filters[0].policies=api")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].patterns[0]",
					"is not a valid path pattern"));
	}

}
