package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every kind of invalid configuration fails start-up with a message that names the
 * property and what is wrong.
 */
class InvalidConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class, AopAutoConfiguration.class));

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"',
			textBlock = """
					zero rate | ratelimit.policies.api.limits[0].rate=0/1s | ratelimit.policies.api.limits[0].rate | Invalid rate '0/1s': the number of permits must be at least 1
					unparsable rate | ratelimit.policies.api.limits[0].rate=five per second | ratelimit.policies.api.limits[0].rate | Invalid rate 'five per second'
					negative capacity | ratelimit.policies.api.limits[0].capacity=-1 | ratelimit.policies.api.limits[0].capacity | 'capacity' of a token-bucket limit must be between 1 and
					missing rate | ratelimit.policies.bare.limits[0].capacity=5 | ratelimit.policies.bare.limits[0].rate | needs 'rate'
					max-wait without shape | ratelimit.policies.api.limits[0].algorithm=leaky-bucket,ratelimit.policies.api.limits[0].max-wait=1s | ratelimit.policies.api.limits[0].max-wait | 'max-wait' applies to a leaky-bucket with mode 'shape' only
					concurrency without max | ratelimit.policies.pool.limits[0].algorithm=concurrency | ratelimit.policies.pool.limits[0].max | needs 'max'
					concurrency with a rate | ratelimit.policies.api.limits[0].algorithm=concurrency,ratelimit.policies.api.limits[0].max=3 | ratelimit.policies.api.limits[0].rate | 'rate' does not apply to a concurrency limit, which takes 'max'
					concurrency with initial | ratelimit.policies.pool.limits[0].algorithm=concurrency,ratelimit.policies.pool.limits[0].max=3,ratelimit.policies.pool.limits[0].initial=1 | ratelimit.policies.pool.limits[0].initial | 'initial' applies to token buckets only, not to a concurrency limit
					max above the most | ratelimit.policies.pool.limits[0].algorithm=concurrency,ratelimit.policies.pool.limits[0].max=100001 | ratelimit.policies.pool.limits[0].max | 'max' of a concurrency limit must be between 1 and 100000 (was 100001)
					zero lease time | ratelimit.policies.pool.limits[0].algorithm=concurrency,ratelimit.policies.pool.limits[0].max=3,ratelimit.policies.pool.limits[0].lease-time=0s | ratelimit.policies.pool.limits[0].lease-time | 'lease-time' of a concurrency limit must be positive (was PT0S)
					lease time on a token bucket | ratelimit.policies.api.limits[0].lease-time=1m | ratelimit.policies.api.limits[0].lease-time | 'lease-time' applies to concurrency limits only, not to a token-bucket limit
					capacity of a window | ratelimit.policies.api.limits[0].algorithm=fixed-window,ratelimit.policies.api.limits[0].capacity=9 | ratelimit.policies.api.limits[0].capacity | 'capacity' applies to token and leaky buckets only; a fixed-window limit allows 5 per window (set by 'rate')
					initial above capacity | ratelimit.policies.api.limits[0].initial=6 | ratelimit.policies.api.limits[0].initial | 'initial' of a token-bucket limit must be between 0 and 5 (was 6)
					mode of a token bucket | ratelimit.policies.api.limits[0].mode=shape | ratelimit.policies.api.limits[0].mode | 'mode' applies to leaky buckets only, not to a token-bucket limit
					zero max-wait | ratelimit.policies.api.limits[0].algorithm=leaky-bucket,ratelimit.policies.api.limits[0].mode=shape,ratelimit.policies.api.limits[0].max-wait=0s | ratelimit.policies.api.limits[0].max-wait | 'max-wait' of a leaky-bucket limit must be positive (was PT0S)
					max-wait too long | ratelimit.policies.api.limits[0].algorithm=leaky-bucket,ratelimit.policies.api.limits[0].mode=shape,ratelimit.policies.api.limits[0].max-wait=106751991167300d | ratelimit.policies.api.limits[0].max-wait | 'max-wait' of a leaky-bucket limit is too long
					limit too fine-grained | ratelimit.policies.api.limits[0].rate=999999937/1d,ratelimit.policies.api.limits[0].capacity=999999937 | ratelimit.policies.api.limits[0] | is too fine-grained to count exactly
					log too long | ratelimit.policies.api.limits[0].algorithm=sliding-window-log,ratelimit.policies.api.limits[0].rate=100001/1h | ratelimit.policies.api.limits[0] | would keep up to 100001 timestamps per key
					unknown zone | ratelimit.policies.api.limits[0].algorithm=fixed-window,ratelimit.policies.api.limits[0].rate=10/1d,ratelimit.policies.api.limits[0].align=calendar,ratelimit.policies.api.limits[0].zone=Europe/Pariss | ratelimit.policies.api.limits[0].zone | Unknown time zone 'Europe/Pariss'; use a region such as Europe/Paris
					months without calendar alignment | ratelimit.policies.api.limits[0].algorithm=fixed-window,ratelimit.policies.api.limits[0].rate=100000/1mo | ratelimit.policies.api.limits[0].rate | A period in months (rate 100000/1mo) has no fixed length: it needs a fixed-window limit with 'align: calendar'
					months on a token bucket | ratelimit.policies.api.limits[0].rate=100000/1mo | ratelimit.policies.api.limits[0].rate | A period in months (rate 100000/1mo) has no fixed length
					calendar alignment on a token bucket | ratelimit.policies.api.limits[0].rate=100/1d,ratelimit.policies.api.limits[0].align=calendar | ratelimit.policies.api.limits[0].align | 'align: calendar' applies to fixed-window limits only, not to a token-bucket limit
					two days aligned to the calendar | ratelimit.policies.api.limits[0].algorithm=fixed-window,ratelimit.policies.api.limits[0].rate=100/2d,ratelimit.policies.api.limits[0].align=calendar | ratelimit.policies.api.limits[0].rate | with 'align: calendar' counts per calendar day, week or month: its period must be 1d, 1w or 1mo (rate was 100/2d)
					zone without calendar alignment | ratelimit.policies.api.limits[0].algorithm=fixed-window,ratelimit.policies.api.limits[0].zone=Europe/Paris | ratelimit.policies.api.limits[0].zone | 'zone' applies to a fixed-window limit with 'align: calendar' only
					unknown key strategy | ratelimit.policies.api.key=cookie | ratelimit.policies.api.key | unknown key strategy 'cookie'; expected principal, api-key, ip, global, header:NAME, bean:NAME or SpEL
					unparsable SpEL key | ratelimit.policies.api.key=#{#request.getHeader(} | ratelimit.policies.api.key | the expression '#{#request.getHeader(}' does not parse
					missing key resolver bean | ratelimit.policies.api.key=bean:tenantKeys | ratelimit.policies.api.key | names no bean 'tenantKeys'
					policy without limits | ratelimit.policies.empty.shadow=true | ratelimit.policies.empty | defines no limits
					unknown default tier | ratelimit.default-tier=gold,ratelimit.policies.api.tiers.free[0].rate=1/1s | ratelimit.default-tier | is 'gold', which no policy defines under 'tiers'; known tiers: free
					tier-only policy without the default tier | ratelimit.default-tier=paid,ratelimit.policies.plans.tiers.paid[0].rate=9/1s,ratelimit.policies.search.tiers.free[0].rate=1/1s | ratelimit.policies.search.tiers | lists neither the default tier 'paid' (ratelimit.default-tier) nor has 'limits'
					tier-only policy without the built-in default tier | ratelimit.policies.plans.tiers.basic[0].rate=1/1s | ratelimit.policies.plans.tiers | lists neither the default tier 'free' (ratelimit.default-tier) nor has 'limits'
					default tier without tiers | ratelimit.default-tier=gold | ratelimit.default-tier | is 'gold', but no policy defines tiers
					blank API key secret | ratelimit.client.api-key-secret= | ratelimit.client.api-key-secret | is blank; set a secret
					untrusted proxy syntax | ratelimit.client.trusted-proxies=10.0.0.0/33 | ratelimit.client.trusted-proxies[0] | invalid prefix length
					non-address proxy | ratelimit.client.trusted-proxies=proxy.example.com | ratelimit.client.trusted-proxies[0] | is not an IP address or CIDR block
					IPv6 prefix of zero | ratelimit.client.ipv6-prefix-length=0 | ratelimit.client.ipv6-prefix-length | is 0; it must be from 1 to 128
					IPv6 prefix too long | ratelimit.client.ipv6-prefix-length=129 | ratelimit.client.ipv6-prefix-length | is 129; it must be from 1 to 128
					negative IPv6 prefix | ratelimit.client.ipv6-prefix-length=-1 | ratelimit.client.ipv6-prefix-length | is -1; it must be from 1 to 128
					unknown policy in a filter | ratelimit.filters[0].patterns=/api/**,ratelimit.filters[0].policies=nope | ratelimit.filters[0].policies[0] | names policy 'nope', which is not defined under ratelimit.policies
					unparsable SpEL cost | ratelimit.filters[0].patterns=/api/**,ratelimit.filters[0].policies=api,ratelimit.filters[0].cost=#{#request.getParameter('n') +} | ratelimit.filters[0].cost | does not parse
					non-numeric cost | ratelimit.filters[0].patterns=/api/**,ratelimit.filters[0].policies=api,ratelimit.filters[0].cost=lots | ratelimit.filters[0].cost | 'lots' is not a cost
					cost reading the arguments a filter's request does not have | ratelimit.filters[0].patterns=/api/**,ratelimit.filters[0].policies=api,ratelimit.filters[0].cost=#{#args[0]} | ratelimit.filters[0].cost | '#{#args[0]}' reads #args, which a filter's request does not have
					cost reading a variable no request has | ratelimit.filters[0].patterns=/api/**,ratelimit.filters[0].policies=api,ratelimit.filters[0].cost=#{#n} | ratelimit.filters[0].cost | '#{#n}' reads #n, which a filter's request does not have; it can read #request and #principal
					invalid path pattern | ratelimit.filters[0].patterns=/api/{id/x,ratelimit.filters[0].policies=api | ratelimit.filters[0].patterns[0] | is not a valid path pattern
					unknown HTTP method | ratelimit.filters[0].patterns=/api/**,ratelimit.filters[0].policies=api,ratelimit.filters[0].methods=FETCH | ratelimit.filters[0].methods[0] | 'FETCH' is not an HTTP method
					penalty of zero | ratelimit.policies.api.penalty=0s | ratelimit.policies.api.penalty | must be positive, such as 15m (was PT0S)
					negative penalty | ratelimit.policies.api.penalty=-1m | ratelimit.policies.api.penalty | must be positive, such as 15m (was PT-1M)
					cost reading the response | ratelimit.filters[0].patterns=/api/**,ratelimit.filters[0].policies=api,ratelimit.filters[0].cost=#{#response.status} | ratelimit.filters[0].cost | reads #response, which a filter's request does not have
					""")
	void failsStartUpNamingThePropertyAndWhatIsWrong(String description, String properties, String property,
			String reason) {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withPropertyValues(properties.split(","))
			.run((context) -> ConfigurationFailures.assertFailure(context, property, reason.trim()));
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					unknown algorithm | ratelimit.policies.api.limits[0].algorithm | token-bukket | concurrency,fixed-window,leaky-bucket,sliding-window-counter,sliding-window-log,token-bucket
					unknown leaky-bucket mode | ratelimit.policies.api.limits[0].mode | queue | police,shape
					unknown window alignment | ratelimit.policies.api.limits[0].align | monthly | calendar,epoch
					unknown algorithm of a tier | ratelimit.policies.api.tiers.free[0].algorithm | leaky | concurrency,fixed-window,leaky-bucket,sliding-window-counter,sliding-window-log,token-bucket
					""")
	void failsStartUpForAnUnknownAlgorithmOrModeNamingThePropertyAndTheValuesItTakes(String description,
			String property, String value, String validValues) {
		// Boot's binder refuses the value (the properties are enums), and its failure
		// analysis says so
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", property + "=" + value)
			.run((context) -> ConfigurationFailures.assertBindFailure(context, property, value,
					List.of(validValues.split(","))));
	}

	@Test
	void failsStartUpForDuplicateFilterPatternsThatConflict() {
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s",
					"ratelimit.policies.other.limits[0].rate=1/1s", "ratelimit.filters[0].patterns=/api/**",
					"ratelimit.filters[0].policies=api", "ratelimit.filters[1].patterns=/other,/api/**",
					"ratelimit.filters[1].methods=GET", "ratelimit.filters[1].policies=other")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[1].patterns[1]",
					"'/api/**' is also a pattern of ratelimit.filters[0] for the same methods"));
	}

	@Test
	void failsStartUpForAHeadFilterOnTheSamePatternAsAGetFilterWhichAlsoLimitsHead() {
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", "ratelimit.filters[0].patterns=/api/**",
					"ratelimit.filters[0].methods=GET", "ratelimit.filters[0].policies=api",
					"ratelimit.filters[1].patterns=/api/**", "ratelimit.filters[1].methods=HEAD",
					"ratelimit.filters[1].policies=api")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.filters[1].patterns[0]",
					"'/api/**' is also a pattern of ratelimit.filters[0] for the same methods (a filter for GET also"
							+ " limits HEAD)"));
	}

	@Test
	void acceptsTheSamePatternForDisjointMethods() {
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", "ratelimit.filters[0].patterns=/api/**",
					"ratelimit.filters[0].methods=GET", "ratelimit.filters[0].policies=api",
					"ratelimit.filters[1].patterns=/api/**", "ratelimit.filters[1].methods=POST",
					"ratelimit.filters[1].policies=api")
			.run((context) -> org.assertj.core.api.Assertions.assertThat(context).hasNotFailed());
	}

	@Test
	void failsStartUpForAnAnnotationNamingAnUnknownPolicy() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(UnknownPolicyService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + UnknownPolicyService.class.getName() + ".call()",
					"names policy 'nope', which is not defined under ratelimit.policies; defined policies: [api]"));
	}

	@Test
	void failsStartUpForAnAnnotationWhoseSpelDoesNotParse() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(BadSpelService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + BadSpelService.class.getName() + ".call(String)",
					"key the expression '#{#name.}' does not parse"));
	}

	@Test
	void failsStartUpForAnAnnotationWhoseCostDoesNotParse() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(BadCostService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + BadCostService.class.getName() + ".call(List)", "cost the expression"));
	}

	@Test
	void failsStartUpForAnAnnotationWhoseExpressionReadsAVariableTheMethodDoesNotHave() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(MisspeltVariableService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + MisspeltVariableService.class.getName() + ".call(String, List)",
					"key '#{#userID.toLowerCase()}' reads #userID, which is not a parameter of the method: its"
							+ " parameters are [userId, items]; besides them an expression can read #request,"
							+ " #principal and #args"));
	}

	@Test
	void failsStartUpForAnAnnotationWhosePolicyKeyReadsAVariableTheMethodDoesNotHave() {
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s",
					"ratelimit.policies.api.key=#{#userID.toLowerCase()}")
			.withBean(PolicyKeyedService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + PolicyKeyedService.class.getName() + ".call(String)",
					"key of policy 'api' (ratelimit.policies.api.key) '#{#userID.toLowerCase()}' reads #userID, which"
							+ " is not a parameter of the method: its parameters are [userId]"));
	}

	@Test
	void startsWithExpressionsThatReadParametersAndTheCallsOwnVariables() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(WellSpeltVariableService.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void warnsOfAFilterPolicyWhoseKeyReadsAMethodParameter(CapturedOutput output) {
		// a request the filter leaves to an annotated handler with that parameter has it:
		// not an error
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", "ratelimit.policies.api.key=#{#userId}",
					"ratelimit.filters[0].patterns=/api/**", "ratelimit.filters[0].policies=api")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("ratelimit.policies.api.key '#{#userId}' reads #userId, which the requests of"
				+ " ratelimit.filters[0] have only when the filter leaves them to a @RateLimited handler method with"
				+ " that parameter");
	}

	@Test
	void reportsAPolicyWithAnInvalidTierWithoutAlsoReportingTheDefaultTierItDefines() {
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", "ratelimit.default-tier=anonymous",
					"ratelimit.policies.api.tiers.anonymous[0].rate=0/1s")
			.run((context) -> {
				ConfigurationFailures.assertFailure(context, "ratelimit.policies.api.tiers.anonymous[0].rate",
						"the number of permits must be at least 1");
				assertThat(context.getStartupFailure()).hasMessageNotContaining("ratelimit.default-tier");
			});
	}

	@Test
	void failsStartUpForAnAnnotationOnAStaticMethod() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(StaticMethodService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + StaticMethodService.class.getName() + ".helper(String)",
					"is on a static method, which no proxy intercepts"));
	}

	@Test
	void failsStartUpForAnAnnotationOnAFinalMethodOfAClassProxiedBean() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(FinalMethodService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + FinalMethodService.class.getName() + ".call(String)",
					"is on a final method, which a class-based (CGLIB) proxy cannot override"));
	}

	@Test
	void failsStartUpForAFinalHandlerMethodOfAController() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(FinalHandlerController.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + FinalHandlerController.class.getName() + ".search(String)",
					"is on a final method, which a class-based (CGLIB) proxy cannot override"));
	}

	@Test
	void failsStartUpForTheFinalPublicMethodsOfAnAnnotatedClass() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(FinalMembersService.class)
			.run((context) -> {
				ConfigurationFailures.assertFailure(context,
						"@RateLimited on " + FinalMembersService.class.getName() + ".sealed()",
						"is on the class of a final method, which a class-based (CGLIB) proxy cannot override");
				assertThat(context.getStartupFailure()).hasMessageNotContaining(".open()");
			});
	}

	@Test
	void failsStartUpForAnAnnotationOnAPrivateMethod() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(PrivateMethodService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + PrivateMethodService.class.getName() + ".hidden()",
					"is on a private method, which no proxy intercepts"));
	}

	@Test
	void failsStartUpForAnAnnotatedBeanRegisteredAsAReadyInstance() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withInitializer(
					(context) -> context.getBeanFactory().registerSingleton("readyService", new PolicyKeyedService()))
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + PolicyKeyedService.class.getName() + ".call(String)",
					"is on bean 'readyService', which no proxy advises"));
	}

	@Test
	void failsStartUpForAnAnnotatedBeanExcludedFromAutoProxying() {
		// a bean named after its class with the suffix .ORIGINAL is never proxied
		// (AutoProxyUtils.isOriginalInstance)
		String name = PolicyKeyedService.class.getName() + ".ORIGINAL";
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(name, PolicyKeyedService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + PolicyKeyedService.class.getName() + ".call(String)",
					"is on bean '" + name + "', which no proxy advises"));
	}

	@Test
	void failsStartUpForAnAnnotatedMethodThatAnInterfaceProxyDoesNotIntercept() {
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", "spring.aop.proxy-target-class=false")
			.withBean(GreetingService.class)
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + GreetingService.class.getName() + ".wave()",
					"is on a method that no interface of bean"));
	}

	@Test
	void startsWhenAnInterfaceProxyInterceptsTheAnnotatedFinalMethod() {
		// a final method that implements an interface method is intercepted through the
		// interface
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", "spring.aop.proxy-target-class=false")
			.withBean(FinalGreetingService.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsStartUpForAFinalAnnotatedMethodOfABeanNotCreatedYet() {
		this.runner.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s")
			.withBean(FinalMethodService.class, FinalMethodService::new, (definition) -> definition.setLazyInit(true))
			.run((context) -> ConfigurationFailures.assertFailure(context,
					"@RateLimited on " + FinalMethodService.class.getName() + ".call(String)",
					"is on a final method, which a class-based (CGLIB) proxy cannot override"));
	}

	@Test
	void leavesTheStaticMethodsOfAnAnnotatedClassAlone() {
		// the policy's key is checked against the instance method only, which the proxy
		// intercepts
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s", "ratelimit.policies.api.key=#{#userId}")
			.withBean(AnnotatedClassService.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void startsWithAPolicyKeyThatReadsTheParameterOfEveryMethodUsingIt() {
		// an annotation's own key replaces the policy's, so the second method need not
		// have #userId
		this.runner
			.withPropertyValues("ratelimit.policies.api.limits[0].rate=5/1s",
					"ratelimit.policies.api.key=#{#userId + (#request?.getRemoteAddr() ?: '')}")
			.withBean(PolicyKeyedService.class)
			.withBean(WellSpeltVariableService.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	static class StaticMethodService {

		@RateLimited("api")
		public static void helper(String userId) {
		}

	}

	static class FinalMethodService {

		@RateLimited("api")
		public final void call(String userId) {
		}

	}

	@RestController
	static class FinalHandlerController {

		@GetMapping("/api/search")
		@RateLimited("api")
		public final String search(@RequestParam String q) {
			return q;
		}

	}

	@RateLimited("api")
	static class FinalMembersService {

		public void open() {
		}

		public final void sealed() {
		}

	}

	static class PrivateMethodService {

		public void call() {
			hidden();
		}

		@RateLimited("api")
		private void hidden() {
		}

	}

	interface Greeter {

		void greet();

	}

	static class GreetingService implements Greeter {

		@Override
		@RateLimited("api")
		public void greet() {
		}

		@RateLimited("api")
		public void wave() {
		}

	}

	static class FinalGreetingService implements Greeter {

		@Override
		@RateLimited("api")
		public final void greet() {
		}

	}

	@RateLimited("api")
	static class AnnotatedClassService {

		public void call(String userId) {
		}

		public static String normalize(String id) {
			return id;
		}

	}

	static class PolicyKeyedService {

		@RateLimited("api")
		public void call(String userId) {
		}

	}

	static class MisspeltVariableService {

		@RateLimited(policy = "api", key = "#{#userID.toLowerCase()}", cost = "#{#items.size()}")
		public void call(String userId, java.util.List<String> items) {
		}

	}

	static class WellSpeltVariableService {

		@RateLimited(policy = "api",
				key = "#{#userId + (#request?.getHeader('X') ?: '') + #args.length + (#principal ?: '')}",
				cost = "#{#items.?[#this.length() > 0].size()}")
		public void call(String userId, java.util.List<String> items) {
		}

	}

	static class UnknownPolicyService {

		@RateLimited("nope")
		public void call() {
		}

	}

	static class BadSpelService {

		@RateLimited(policy = "api", key = "#{#name.}")
		public void call(String name) {
		}

	}

	static class BadCostService {

		@RateLimited(policy = "api", cost = "#{#items.size(}")
		public void call(java.util.List<String> items) {
		}

	}

}
