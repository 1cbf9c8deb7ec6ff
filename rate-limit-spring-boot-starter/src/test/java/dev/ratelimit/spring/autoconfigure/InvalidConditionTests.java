package dev.ratelimit.spring.autoconfigure;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.web.FilterRule;
import dev.ratelimit.spring.web.RuleBasedFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A condition ({@code when}) of a filter rule or an annotation that is wrong for every
 * request fails start-up naming its property or annotated method: one that does not
 * parse, or that reads a variable the request or the method does not have; a reload
 * rebuilds the filters' conditions, or is refused for one that does not parse.
 */
class InvalidConditionTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class, AopAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s");

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			textBlock = """
					condition that does not parse | #{#request.getHeader('X') ==} | the expression '#{#request.getHeader('X') ==}' does not parse
					condition that is empty | #{ } | the expression '#{ }' is empty
					condition that is neither SpEL nor a boolean | internal | 'internal' is not a condition; write SpEL that gives true or false
					condition reading the response | #{#response.status == 401} | '#{#response.status == 401}' reads #response, which a filter's request does not have; a condition is decided before the handler runs, when there is no response yet
					condition reading a variable no request has | #{#userId != 'admin'} | '#{#userId != 'admin'}' reads #userId, which a filter's request does not have; it can read #request and #principal
					condition reading the arguments a filter's request does not have | #{#args.length > 0} | reads #args, which a filter's request does not have
					""")
	void failsStartUpForAFilterConditionNamingTheProperty(String description, String when, String reason) {
		this.runner
			.withPropertyValues("ratelimit.filters[0].patterns=/api/**", "ratelimit.filters[0].policies=api",
					"ratelimit.filters[0].when=" + when)
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[0].when", reason));
	}

	@Test
	void acceptsConditionsOverTheRequestAndThePrincipalAndPlainBooleans() {
		this.runner
			.withPropertyValues("ratelimit.filters[0].patterns=/a", "ratelimit.filters[0].policies=api",
					"ratelimit.filters[0].when=#{#request.getHeader('X-Internal') == null && #principal == null}",
					"ratelimit.filters[1].patterns=/b", "ratelimit.filters[1].policies=api",
					"ratelimit.filters[1].when=FALSE", "ratelimit.filters[2].patterns=/c",
					"ratelimit.filters[2].policies=api", "ratelimit.filters[2].when= ")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				List<FilterRule> rules = RateLimitFilterDescriptions.filters(context).get(0).getRules();
				assertThat(rules).extracting((rule) -> String.valueOf(rule.when()))
					.containsExactly("#{#request.getHeader('X-Internal') == null && #principal == null}", "false",
							"null");
			});
	}

	@Test
	void acceptsTheSamePatternInRulesWithConditions() {
		// internal and external callers of one path, each with its own policies
		this.runner
			.withPropertyValues("ratelimit.policies.internal.limits[0].rate=50/1s",
					"ratelimit.filters[0].patterns=/api/**", "ratelimit.filters[0].policies=api",
					"ratelimit.filters[0].when=#{#request.getHeader('X-Internal') == null}",
					"ratelimit.filters[1].patterns=/api/**", "ratelimit.filters[1].policies=internal",
					"ratelimit.filters[1].when=#{#request.getHeader('X-Internal') != null}")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aReloadRebuildsTheConditionsAndRefusesOneThatDoesNotParse() {
		Map<String, Object> editable = new HashMap<>(Map.of("ratelimit.filters[0].patterns", "/api/**",
				"ratelimit.filters[0].policies", "api", "ratelimit.filters[0].when", "#{#principal == null}"));
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("editable", editable)))
			.run((context) -> {
				RateLimitConfigurationReloader reloader = context.getBean(RateLimitConfigurationReloader.class);
				RuleBasedFilter filter = RateLimitFilterDescriptions.filters(context).get(0);
				assertThat(filter.getRules().get(0).when()).hasToString("#{#principal == null}");

				editable.put("ratelimit.filters[0].when", "#{#request.getHeader('X-Internal') == null}");
				assertThat(reloader.reload(List.of("ratelimit.filters[0].when"))).isTrue();
				assertThat(filter.getRules().get(0).when()).hasToString("#{#request.getHeader('X-Internal') == null}");
				assertThat(RateLimitFilterDescriptions.describe(context).get(0).when())
					.isEqualTo("#{#request.getHeader('X-Internal') == null}");

				editable.put("ratelimit.filters[0].when", "#{#request.getHeader(}");
				assertThat(reloader.reload(List.of("ratelimit.filters[0].when"))).isFalse();
				assertThat(filter.getRules().get(0).when()).hasToString("#{#request.getHeader('X-Internal') == null}");

				editable.remove("ratelimit.filters[0].when");
				assertThat(reloader.reload(List.of("ratelimit.filters[0].when"))).isTrue();
				assertThat(filter.getRules().get(0).when()).isNull();
				assertThat(RateLimitFilterDescriptions.describe(context).get(0).when()).isNull();
			});
	}

	@Test
	void failsStartUpForAnAnnotationWhoseConditionDoesNotParse() {
		this.runner.withBean(UnparsableConditionService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + UnparsableConditionService.class.getName() + ".call(String)",
					"when the expression '#{#userId !=}' does not parse"));
	}

	@Test
	void failsStartUpForAnAnnotationWhoseConditionReadsAVariableTheMethodDoesNotHave() {
		this.runner.withBean(MisspeltConditionService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + MisspeltConditionService.class.getName() + ".call(String)",
					"when '#{#userID != 'admin'}' reads #userID, which is not a parameter of the method: its"
							+ " parameters are [userId]"));
	}

	@Test
	void acceptsAnAnnotationConditionOverTheMethodsArguments() {
		this.runner.withBean(ArgumentConditionService.class).run((context) -> assertThat(context).hasNotFailed());
	}

	static class UnparsableConditionService {

		@RateLimited(policy = "api", when = "#{#userId !=}")
		public void call(String userId) {
		}

	}

	static class MisspeltConditionService {

		@RateLimited(policy = "api", when = "#{#userID != 'admin'}")
		public void call(String userId) {
		}

	}

	static class ArgumentConditionService {

		@RateLimited(policy = "api", when = "#{#userId != 'admin' && #args.length == 1 && #request == null}")
		public void call(String userId) {
		}

	}

}
