package dev.ratelimit.spring.fuzz;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.io.support.SpringFactoriesLoader.ArgumentResolver;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.util.PlaceholderResolutionException;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.setup.DefaultMockMvcBuilder;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.WebApplicationContext;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;
import dev.ratelimit.spring.Sleeper;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.autoconfigure.RateLimitAnnotationAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitEndpointAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitHealthAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitMetricsAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitRedisAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitWebAutoConfiguration;
import dev.ratelimit.spring.fuzz.RateLimitConfigurations.GeneratedConfiguration;
import dev.ratelimit.spring.testsupport.MutableTimeSource;
import dev.ratelimit.spring.testsupport.BootFailureAnalysis;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;

/**
 * Fuzz of the configuration (issue 18): generated {@code ratelimit.*} property sets,
 * valid and invalid (see {@link RateLimitConfigurations}), each started with all of the
 * starter's auto-configurations in a servlet web application. Each must either start, and
 * then answer a request without a server error, or fail with a failure analysis that
 * names a {@code ratelimit.} property that it sets (or an annotated method): never a bare
 * exception that names none. Each try must end within {@link #TRY_BOUND}: a hang is a
 * failure.
 *
 * <p>
 * {@code ./mvnw verify} runs the short form: the number of tries set by
 * {@code jqwik.tries.default} in the starter's pom. The long form, 10,000 configurations
 * (two and a half minutes here when the 2 cores are idle, six when busy):
 *
 * <pre>
 * ./mvnw -B -pl rate-limit-spring-boot-starter -am test -Dtest=ConfigurationFuzz \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Djqwik.tries.default=10000
 * </pre>
 *
 * ({@code -Dtest='*Fuzz*'} runs {@link HostileHeaderFuzz} as well.) A failing try is
 * shrunk to a small configuration and reported with the seed that replays it
 * ({@code @Property(seed = "...")}); jqwik's report, with the share of configurations
 * that started, is in {@code target/surefire-reports/*ConfigurationFuzz-output.txt}.
 */
class ConfigurationFuzz {

	/** Far above the few tens of milliseconds a start takes. */
	static final Duration TRY_BOUND = Duration.ofSeconds(20);

	/**
	 * A property of ours in a failure analysis: not a package or bean name such as
	 * dev.ratelimit.spring....
	 */
	private static final Pattern PROPERTY = Pattern
		.compile("(?<![\\w.\\-])ratelimit\\.(?!spring\\.|core\\.)[^\\s'\"]+");

	private static final WebApplicationContextRunner RUNNER = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
				RateLimitMetricsAutoConfiguration.class, RateLimitEndpointAutoConfiguration.class,
				RateLimitHealthAutoConfiguration.class, AopAutoConfiguration.class))
		.withUserConfiguration(FuzzApplication.class);

	private static TryBound bound;

	@BeforeContainer
	static void startWorker() {
		bound = new TryBound(TRY_BOUND);
	}

	@AfterContainer
	static void stopWorker() {
		bound.close();
	}

	@Property
	void everyConfigurationStartsOrFailsNamingAProperty(@ForAll("configurations") GeneratedConfiguration configuration)
			throws Exception {
		String outcome = bound.call("Starting " + configuration, () -> startOrFail(configuration));
		Statistics.label("outcome").collect(outcome);
		Statistics.label("outcome").coverage((coverage) -> {
			coverage.check("started").percentage((percent) -> percent >= 10);
			coverage.check("invalid").percentage((percent) -> percent >= 10);
		});
	}

	@Provide
	Arbitrary<GeneratedConfiguration> configurations() {
		return RateLimitConfigurations.configurations(List.of(AnnotatedService.class, ExpressionService.class));
	}

	private static String startOrFail(GeneratedConfiguration configuration) {
		AtomicReference<String> outcome = new AtomicReference<>();
		AtomicReference<ConfigurableApplicationContext> started = new AtomicReference<>();
		WebApplicationContextRunner runner = RUNNER.withInitializer((context) -> {
			started.set(context);
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("fuzz", configuration.asMap()));
		});
		for (Class<?> bean : configuration.beans()) {
			runner = runner.withBean(bean);
		}
		runner.run((context) -> {
			Throwable failure = context.getStartupFailure();
			outcome.set((failure != null) ? failedNamingAProperty(configuration, failure, started.get())
					: startedAndAnswers(configuration, context));
		});
		return outcome.get();
	}

	private static String failedNamingAProperty(GeneratedConfiguration configuration, Throwable failure,
			ConfigurableApplicationContext context) {
		PlaceholderResolutionException placeholder = find(failure, PlaceholderResolutionException.class);
		if (placeholder != null) {
			// Spring's own failure for a ${...} it cannot resolve, which names the value:
			// not the starter's to name
			return "invalid (placeholder)";
		}
		FailureAnalysis analysis = BootFailureAnalysis.of(failure,
				ArgumentResolver.of(BeanFactory.class, context.getBeanFactory())
					.and(Environment.class, context.getEnvironment()));
		if (analysis == null) {
			throw new AssertionError("Start-up failed, and no failure analyzer explains it: " + stackOf(failure));
		}
		String description = analysis.getDescription();
		List<String> named = new ArrayList<>();
		RateLimitConfigurationException invalid = find(failure, RateLimitConfigurationException.class);
		if (invalid != null) {
			for (Problem problem : invalid.getProblems()) {
				if (problem.reason() == null || problem.reason().isBlank()
						|| !description.contains(problem.property())) {
					throw new AssertionError("The problem " + problem + " is not reported whole: " + description);
				}
				named.add(problem.property());
			}
		}
		else {
			named.addAll(boundNames(failure));
			if (!named.isEmpty() && named.stream().noneMatch(description::contains)) {
				throw new AssertionError("The failure analysis names none of " + named + ":\n" + description);
			}
			Matcher matcher = PROPERTY.matcher(description);
			while (named.isEmpty() && matcher.find()) {
				named.add(matcher.group().replaceAll(",$", ""));
			}
		}
		if (named.isEmpty()) {
			throw new AssertionError(
					"Start-up failed without naming a ratelimit property:\n" + description + "\n" + stackOf(failure));
		}
		for (String property : named) {
			boolean annotation = property.startsWith("@RateLimited on ") && !configuration.beans().isEmpty();
			if (!annotation && !relates(property, configuration)) {
				throw new AssertionError("Start-up failed naming " + property
						+ ", which the configuration does not set:\n" + description);
			}
		}
		return (invalid != null) ? "invalid" : "invalid (bind)";
	}

	private static String startedAndAnswers(GeneratedConfiguration configuration, ApplicationContext context)
			throws Exception {
		@SuppressWarnings("rawtypes")
		List<FilterRegistrationBean> registrations = context.getBeansOfType(FilterRegistrationBean.class)
			.values()
			.stream()
			.sorted(AnnotationAwareOrderComparator.INSTANCE)
			.toList();
		if (registrations.isEmpty()) {
			return "started";
		}
		DefaultMockMvcBuilder builder = MockMvcBuilders.webAppContextSetup((WebApplicationContext) context);
		registrations.forEach((registration) -> builder.addFilters(registration.getFilter()));
		MockMvc mvc = builder.build();
		URI path = requestPath(configuration);
		MvcResult result;
		try {
			result = mvc.perform(get(path).with((request) -> {
				request.setRemoteAddr("192.0.2.1");
				return request;
			})).andReturn();
		}
		catch (Exception ex) {
			// an expression that fails whatever the request carries is a server error
			// (docs/RESPONSES.md)
			if (configuration.hasExpression()) {
				return "started";
			}
			throw new AssertionError("The started application failed a request to " + path + ": " + stackOf(ex));
		}
		int status = result.getResponse().getStatus();
		if (status >= 500 && !configuration.hasExpression()) {
			throw new AssertionError("The started application answered " + status + " to " + path + ": "
					+ result.getResponse().getContentAsString());
		}
		return "started";
	}

	/**
	 * A path that the first filter pattern matches, if there is one that can be read as a
	 * path.
	 */
	private static URI requestPath(GeneratedConfiguration configuration) {
		String pattern = configuration.properties()
			.stream()
			.filter((entry) -> entry.name().startsWith("ratelimit.filters[")
					&& (entry.name().endsWith(".patterns") || entry.name().endsWith(".patterns[0]")))
			.map((entry) -> entry.value().split(",")[0])
			.findFirst()
			.orElse("/api/x");
		StringBuilder path = new StringBuilder();
		for (String segment : pattern.split("/")) {
			if (segment.isEmpty()) {
				continue;
			}
			path.append('/').append(segment.matches("[A-Za-z0-9._-]+") ? segment : "x");
		}
		return URI.create(path.isEmpty() ? "/" : path.toString());
	}

	/** The properties that Boot's binder names in its exceptions. */
	private static List<String> boundNames(Throwable failure) {
		List<String> names = new ArrayList<>();
		for (Throwable candidate = failure; candidate != null; candidate = candidate.getCause()) {
			if (candidate instanceof UnboundConfigurationPropertiesException unbound) {
				unbound.getUnboundProperties().forEach((property) -> names.add(property.getName().toString()));
			}
			else if (candidate instanceof BindException bind) {
				names.add(bind.getName().toString());
			}
		}
		return names;
	}

	/**
	 * Whether a property named by a failure is one that the configuration sets, an
	 * element of one, or a sibling of one (a limit that sets 'capacity' but misses
	 * 'rate'). Names are compared as Boot reads and compares them: case, dashes and what
	 * relaxed binding drops do not count.
	 */
	static boolean relates(String property, GeneratedConfiguration configuration) {
		String named = normalize(property);
		int last = named.lastIndexOf('.');
		String parent = (last > 0) ? named.substring(0, last) : "";
		if (parent.isEmpty() || parent.equals("ratelimit")) {
			return true;
		}
		return configuration.properties()
			.stream()
			.flatMap((entry) -> Stream.of(normalize(entry.name()), normalize(adapted(entry.name()))))
			.anyMatch((set) -> set.startsWith(named) || set.equals(parent) || set.startsWith(parent + "."));
	}

	/**
	 * A name as Boot reads it from a property source ("policies[2]${x}" is
	 * "policies[2].x").
	 */
	private static String adapted(String name) {
		try {
			return ConfigurationPropertyName.adapt(name, '.').toString();
		}
		catch (RuntimeException ex) {
			return name;
		}
	}

	private static String normalize(String name) {
		String lower = name.toLowerCase(Locale.ROOT).replace('[', '.');
		StringBuilder kept = new StringBuilder();
		for (int i = 0; i < lower.length(); i++) {
			char c = lower.charAt(i);
			if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.') {
				kept.append(c);
			}
		}
		return kept.toString().replaceAll("\\.+", ".").replaceAll("\\.$", "");
	}

	private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
		for (Throwable candidate = failure; candidate != null; candidate = candidate.getCause()) {
			if (type.isInstance(candidate)) {
				return type.cast(candidate);
			}
		}
		return null;
	}

	static String stackOf(Throwable failure) {
		StringWriter stack = new StringWriter();
		failure.printStackTrace(new PrintWriter(stack));
		return stack.toString().lines().limit(60).reduce("", (a, b) -> a + "\n" + b);
	}

	/**
	 * The application around the configuration: a fake clock, a sleeper that does not
	 * sleep, a key resolver bean for {@code bean:tenantKeys} and a bean of another type
	 * for {@code bean:notAResolver}, a meter registry, and a controller that answers
	 * every path.
	 */
	@Configuration(proxyBeanMethods = false)
	@Import(AnyPathController.class)
	static class FuzzApplication {

		@Bean
		TimeSource timeSource() {
			return new MutableTimeSource();
		}

		@Bean
		Sleeper sleeper() {
			return (delay) -> {
			};
		}

		@Bean
		KeyResolver tenantKeys() {
			return (context) -> "tenant:"
					+ ((context.request() != null) ? context.request().getHeader("X-Tenant") : "none");
		}

		@Bean
		String notAResolver() {
			return "text";
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@RestController
	static class AnyPathController {

		@RequestMapping("/**")
		String any() {
			return "ok";
		}

	}

	static class AnnotatedService {

		@RateLimited("api")
		public String call(String userId) {
			return userId;
		}

	}

	static class ExpressionService {

		@RateLimited(policy = "api", key = "#{#userId}", cost = "#{#items.size()}")
		public String call(String userId, List<String> items) {
			return userId;
		}

	}

}
