package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import dev.ratelimit.spring.RateLimitService;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A policy's {@code count-if} that is wrong for every response fails start-up naming
 * {@code ratelimit.policies.NAME.count-if}, as does a filter's cost that reads the
 * response, which only {@code count-if} can.
 */
class InvalidCountIfTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.login.key=ip", "ratelimit.policies.login.limits[0].rate=5/15m");

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			textBlock = """
					count-if that does not parse | #{#response.status ==} | the expression '#{#response.status ==}' does not parse
					count-if that is neither SpEL nor a boolean | failures | 'failures' is not a condition
					count-if reading a variable no response has | #{#result == 401} | '#{#result == 401}' reads #result, which a response does not have; it can read #response, #request and #principal
					""")
	void failsStartUpForACountIfNamingTheProperty(String description, String countIf, String reason) {
		this.runner.withPropertyValues("ratelimit.policies.login.count-if=" + countIf)
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.policies.login.count-if",
					reason));
	}

	@Test
	void failsStartUpForACountIfOnAShadowPolicy() {
		this.runner
			.withPropertyValues("ratelimit.policies.login.count-if=#{#response.status == 401}",
					"ratelimit.policies.login.shadow=true")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.policies.login.count-if",
					"does not apply to a shadow policy"));
	}

	@Test
	void failsStartUpForACountIfOnAConcurrencyLimit() {
		this.runner.withPropertyValues("ratelimit.policies.login.count-if=#{#response.status == 401}",
				"ratelimit.policies.login.limits[1].algorithm=concurrency", "ratelimit.policies.login.limits[1].max=2")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.policies.login.count-if",
					"does not apply to a concurrency limit"));
	}

	@Test
	void failsStartUpForAFilterCostThatReadsTheResponse() {
		this.runner
			.withPropertyValues("ratelimit.filters[0].patterns=/login", "ratelimit.filters[0].policies=login",
					"ratelimit.filters[0].cost=#{#response.status == 401 ? 1 : 0}")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].cost",
					"reads #response, which a filter's request does not have; a cost is decided before the handler"
							+ " runs, when there is no response yet: to charge by the response, set count-if on the"
							+ " policy"));
	}

	@Test
	void acceptsACountIfOverTheResponseTheRequestAndThePrincipal() {
		this.runner.withPropertyValues(
				"ratelimit.policies.login.count-if=#{#response.status == 401 && #response.getHeader('X-Kind') == null"
						+ " && #request.method == 'POST' && #principal == null}")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RateLimitService.class).policies().get("login").countIf())
					.hasToString("#{#response.status == 401 && #response.getHeader('X-Kind') == null"
							+ " && #request.method == 'POST' && #principal == null}");
			});
	}

}
