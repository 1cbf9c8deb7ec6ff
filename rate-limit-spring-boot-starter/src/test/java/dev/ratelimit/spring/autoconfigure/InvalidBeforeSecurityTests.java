package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A filter with {@code before-security} runs before any caller is authenticated: a policy
 * keyed by anything but the address or one global key, a policy with tiers, and a
 * condition or cost that reads {@code #principal} fail start-up naming the property; and
 * {@code count-if-mode} without {@code count-if} does too.
 */
class InvalidBeforeSecurityTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.guard.limits[0].rate=5/15m", "ratelimit.filters[0].patterns=/**",
				"ratelimit.filters[0].before-security=true", "ratelimit.filters[0].policies=guard");

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					principal | names policy 'guard', keyed by 'principal', but a filter with before-security runs before any caller is authenticated; key the policy by 'ip' or 'global', or remove before-security
					api-key | names policy 'guard', keyed by 'api-key', but a filter with before-security runs before any caller is authenticated
					header:X-Tenant | names policy 'guard', keyed by 'header:X-Tenant', but a filter with before-security
					""")
	void failsStartUpForAPolicyKeyedByWhatNeedsAnAuthenticatedCaller(String key, String reason) {
		this.runner.withPropertyValues("ratelimit.policies.guard.key=" + key)
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].policies[0]", reason));
	}

	@Test
	void failsStartUpForAPolicyWithTiers() {
		this.runner
			.withPropertyValues("ratelimit.policies.guard.key=ip", "ratelimit.policies.guard.tiers.free[0].rate=5/1m")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].policies[0]",
					"names policy 'guard', which has tiers, but a filter with before-security runs before any caller"
							+ " has a tier; give the policy 'limits' instead, or remove before-security"));
	}

	@Test
	void failsStartUpForAPolicyWhoseCountIfReadsThePrincipal() {
		this.runner
			.withPropertyValues("ratelimit.policies.guard.key=ip",
					"ratelimit.policies.guard.count-if=#{#principal == null && #response.status == 401}")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].policies[0]",
					"whose count-if '#{#principal == null && #response.status == 401}' reads #principal, which is"
							+ " always null before Spring Security"));
	}

	@Test
	void failsStartUpForAConditionOrCostThatReadsThePrincipal() {
		this.runner
			.withPropertyValues("ratelimit.policies.guard.key=ip", "ratelimit.filters[0].when=#{#principal == null}")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].when",
					"'#{#principal == null}' reads #principal, which is always null before Spring Security"));
		this.runner
			.withPropertyValues("ratelimit.policies.guard.key=ip",
					"ratelimit.filters[0].cost=#{#principal != null ? 1 : 2}")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].cost",
					"reads #principal, which is always null before Spring Security"));
	}

	@Test
	void startsWithAPolicyKeyedByTheAddressOrGlobally() {
		for (String key : new String[] { "ip", "IP", "global" }) {
			this.runner.withPropertyValues("ratelimit.policies.guard.key=" + key)
				.run((context) -> assertThat(context).hasNotFailed());
		}
	}

	@Test
	void failsStartUpForACountIfModeWithoutCountIf() {
		this.runner
			.withPropertyValues("ratelimit.policies.guard.key=ip",
					"ratelimit.policies.guard.count-if-mode=check-then-charge")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.policies.guard.count-if-mode",
					"applies only to a policy with 'count-if'; set 'count-if' or remove 'count-if-mode'"));
	}

}
