package dev.ratelimit.spring.autoconfigure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;
import dev.ratelimit.spring.RateLimitListener;
import dev.ratelimit.spring.RateLimitListeners;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.annotation.RateLimitedMethods;
import dev.ratelimit.spring.key.KeyResolverFactory;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Reads the {@code ratelimit} configuration again from the Environment, checks all of it,
 * and makes it the running one, or refuses all of it. Spring Cloud's
 * {@code EnvironmentChangeEvent} calls {@link #reload(Collection)} when it names a
 * {@code ratelimit.*} key (such as after {@code POST /actuator/refresh}); an application
 * may call it too.
 * <p>
 * The policies, their limits, tiers, keys and shadow flags, {@code default-tier} and the
 * filter rules change at run time. The backend, its Redis, memory, header and client
 * settings are read once at start-up: a change to them is logged, and applies at the next
 * start.
 */
public class RateLimitConfigurationReloader {

	private static final Log logger = LogFactory.getLog(RateLimitConfigurationReloader.class);

	private static final String PREFIX = "ratelimit";

	private static final Set<String> RELOADABLE = Set.of("ratelimit.policies", "ratelimit.filters",
			"ratelimit.default-tier");

	private static final boolean WEB_PRESENT = ClassUtils.isPresent("org.springframework.web.util.pattern.PathPattern",
			RateLimitConfigurationReloader.class.getClassLoader());

	private final Environment environment;

	private final RateLimitService service;

	private final KeyResolverFactory keyResolvers;

	private final ObjectProvider<RateLimitedMethods> annotatedMethods;

	private final FilterRules filterRules;

	private final RateLimitListeners listeners;

	private final Object lock = new Object();

	/**
	 * Creates the reloader.
	 * @param environment the Environment to read the configuration from
	 * @param service the decision path whose policies a reload replaces
	 * @param keyResolvers the factory of the policies' key resolvers
	 * @param annotatedMethods the annotated methods, whose policies a new configuration
	 * must keep
	 * @param filterRules checks the new filter rules and replaces the running ones
	 * @param listeners the listeners told of each reload's result
	 */
	RateLimitConfigurationReloader(Environment environment, RateLimitService service, KeyResolverFactory keyResolvers,
			ObjectProvider<RateLimitedMethods> annotatedMethods, FilterRules filterRules,
			List<RateLimitListener> listeners) {
		this.environment = Objects.requireNonNull(environment, "environment must not be null");
		this.service = Objects.requireNonNull(service, "service must not be null");
		this.keyResolvers = Objects.requireNonNull(keyResolvers, "keyResolvers must not be null");
		this.annotatedMethods = annotatedMethods;
		this.filterRules = filterRules;
		this.listeners = new RateLimitListeners(listeners);
	}

	static FilterRules filterRules(ListableBeanFactory beanFactory) {
		return WEB_PRESENT ? new WebFilterRules(beanFactory) : FilterRules.NONE;
	}

	/**
	 * Reads, checks and applies the whole {@code ratelimit} configuration as the
	 * Environment now has it.
	 * @param changedKeys the keys that changed, if known, so that changes needing a
	 * restart can be reported; empty if not known
	 * @return whether the configuration was applied ({@code false}: refused, and the
	 * running one stays)
	 */
	public boolean reload(Collection<String> changedKeys) {
		synchronized (this.lock) {
			List<Problem> problems = new ArrayList<>();
			Checked checked = check(problems);
			if (checked == null || !problems.isEmpty()) {
				logger.error("Refused the changed rate-limit configuration; the running one stays:" + problems.stream()
					.map((problem) -> System.lineSeparator() + " - " + problem)
					.reduce("", String::concat));
				this.listeners.reloaded(false);
				return false;
			}
			Set<String> restartOnly = new TreeSet<>();
			for (String key : changedKeys) {
				if (key.startsWith(PREFIX + ".") && RELOADABLE.stream().noneMatch(key::startsWith)) {
					restartOnly.add(key);
				}
			}
			if (!restartOnly.isEmpty()) {
				logger.warn("Changed rate-limit settings that apply only at the next start: " + restartOnly);
			}
			PolicyRegistry registry = checked.registry();
			// the rules first: a request that reads them before the policies sees the new
			// rules' policies by name in either registry
			checked.applyRules().run();
			this.service.applyPolicies(registry);
			logger.info("Applied the changed rate-limit configuration: policies " + registry.names());
			this.listeners.reloaded(true);
			return true;
		}
	}

	private @Nullable Checked check(List<Problem> problems) {
		RateLimitProperties properties;
		try {
			properties = Binder.get(this.environment)
				.bind(PREFIX, Bindable.of(RateLimitProperties.class))
				.orElseGet(RateLimitProperties::new);
		}
		catch (BindException ex) {
			problems.add(new Problem(
					ex.getProperty() != null ? ex.getProperty().getName().toString() : ex.getName().toString(),
					"cannot be read: " + rootMessage(ex)));
			return null;
		}
		PolicyRegistry registry;
		try {
			registry = PolicyRegistryFactory.policies(properties, this.keyResolvers);
		}
		catch (RateLimitConfigurationException ex) {
			problems.addAll(ex.getProblems());
			return null;
		}
		problems.addAll(this.service.problemsWith(registry));
		RateLimitedMethods methods = this.annotatedMethods.getIfAvailable();
		if (methods != null) {
			for (String name : methods.policiesInUse()) {
				if (registry.find(name) == null) {
					problems.add(new Problem("ratelimit.policies." + name,
							"is gone, but a @RateLimited method names it; keep the policy"));
				}
			}
		}
		return new Checked(registry, this.filterRules.check(properties, registry, problems));
	}

	private record Checked(PolicyRegistry registry, Runnable applyRules) {

	}

	private static String rootMessage(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause.getMessage();
	}

	/**
	 * Checks the filter rules of a new configuration, and applies them.
	 */
	interface FilterRules {

		FilterRules NONE = (properties, registry, problems) -> () -> {
		};

		/**
		 * Checks the rules; returns what replaces the running rules with them.
		 */
		Runnable check(RateLimitProperties properties, PolicyRegistry registry, List<Problem> problems);

	}

	/**
	 * The rules of the rate-limit filters of either web stack; loaded only where
	 * spring-web is.
	 */
	static final class WebFilterRules implements FilterRules {

		private final ListableBeanFactory beanFactory;

		WebFilterRules(ListableBeanFactory beanFactory) {
			this.beanFactory = beanFactory;
		}

		@Override
		public Runnable check(RateLimitProperties properties, PolicyRegistry registry, List<Problem> problems) {
			List<dev.ratelimit.spring.web.RuleBasedFilter> filters = RateLimitFilterDescriptions
				.filters(this.beanFactory);
			if (filters.isEmpty()) {
				return () -> {
				};
			}
			try {
				List<dev.ratelimit.spring.web.FilterRule> rules = FilterRuleFactory.rules(properties, registry);
				return () -> filters.forEach((filter) -> filter.replaceRules(rules));
			}
			catch (RateLimitConfigurationException ex) {
				problems.addAll(ex.getProblems());
				return () -> {
				};
			}
		}

	}

}
