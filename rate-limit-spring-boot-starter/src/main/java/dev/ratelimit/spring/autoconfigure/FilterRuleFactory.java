package dev.ratelimit.spring.autoconfigure;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.PatternSyntaxException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;
import dev.ratelimit.spring.RateLimitCost;
import dev.ratelimit.spring.RateLimitExpression;
import dev.ratelimit.spring.key.KeyResolverFactory;
import dev.ratelimit.spring.web.FilterRule;

/**
 * Reads {@code ratelimit.filters} into {@link FilterRule filter rules}, compiling each
 * path pattern and expression once and reporting each mistake with the path of its
 * property.
 */
final class FilterRuleFactory {

	private static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	private static final Log logger = LogFactory.getLog(FilterRuleFactory.class);

	private FilterRuleFactory() {
	}

	static List<FilterRule> rules(RateLimitProperties properties, PolicyRegistry registry) {
		return rules(properties, registry, true);
	}

	/**
	 * Reads the filter rules.
	 * @param properties the configuration
	 * @param registry the policies
	 * @param warn whether to log the warnings of what reads a variable the filter's
	 * requests lack (once per configuration: not again for a second filter)
	 * @return the rules
	 */
	static List<FilterRule> rules(RateLimitProperties properties, PolicyRegistry registry, boolean warn) {
		List<Problem> problems = new ArrayList<>();
		List<FilterRule> rules = new ArrayList<>();
		List<RateLimitProperties.Filter> filters = properties.getFilters();
		List<Set<String>> methodsByFilter = new ArrayList<>();
		List<List<String>> patternsByFilter = new ArrayList<>();
		for (int i = 0; i < filters.size(); i++) {
			RateLimitProperties.Filter filter = filters.get(i);
			String path = "ratelimit.filters[" + i + "]";
			int before = problems.size();
			List<PathPattern> patterns = patterns(filter, path, problems);
			Set<String> methods = methods(filter, path, problems);
			List<AppliedPolicy> policies = policies(filter, path, registry, problems, warn);
			RateLimitCost cost = RateLimitCost.one();
			try {
				cost = RateLimitCost.parse(filter.getCost());
				for (String variable : cost.unknownRequestVariables()) {
					// a filter's request has no arguments: read as null, it would refuse
					// every request
					String hint = variable.equals("response")
							? "; a cost is decided before the handler runs, when there is no response yet: to charge"
									+ " by the response, set count-if on the policy"
							: "; it can read #request and #principal";
					problems.add(new Problem(path + ".cost", "'" + filter.getCost().trim() + "' reads #" + variable
							+ ", which a filter's request does not have" + hint));
				}
			}
			catch (IllegalArgumentException ex) {
				problems.add(new Problem(path + ".cost", ex.getMessage()));
			}
			RateLimitCondition when = condition(filter, path, problems);
			if (filter.isBeforeSecurity()) {
				checkBeforeSecurity(filter, path, registry, problems);
				if (when != null && when.readsVariable("principal")) {
					problems.add(new Problem(path + ".when", "'" + filter.getWhen().trim() + "' reads #principal, which"
							+ " is always null before Spring Security; read #request only, or remove before-security"));
				}
				if (cost.readsVariable("principal")) {
					problems.add(new Problem(path + ".cost", "'" + filter.getCost().trim() + "' reads #principal, which"
							+ " is always null before Spring Security; read #request only, or remove before-security"));
				}
			}
			List<String> patternTexts = patterns.stream().map(PathPattern::getPatternString).toList();
			if (filter.isBeforeSecurity()) {
				// decided apart, before Spring Security: its own stage, whose requests
				// the
				// later filters decide again with their own policies
				patternsByFilter.add(List.of());
				methodsByFilter.add(Set.of());
			}
			else if (filter.getWhen() == null || filter.getWhen().isBlank()) {
				// rules with conditions may share patterns: each applies to the requests
				// its condition picks, such as internal and external callers
				checkDuplicates(i, patternTexts, methods, patternsByFilter, methodsByFilter, problems);
				patternsByFilter.add(patternTexts);
				methodsByFilter.add(methods);
			}
			else {
				patternsByFilter.add(List.of());
				methodsByFilter.add(Set.of());
			}
			if (problems.size() == before) {
				rules.add(new FilterRule(patterns, methods, policies, cost, when, filter.isBeforeSecurity()));
			}
		}
		PolicyRegistryFactory.throwIfAny(problems);
		if (warn) {
			warnOfPoliciesInBothStages(rules);
		}
		return rules;
	}

	/**
	 * Warns of a policy that a filter with before-security and another filter both name:
	 * the two are decided apart, so a request that both match is charged twice.
	 */
	private static void warnOfPoliciesInBothStages(List<FilterRule> rules) {
		Set<String> before = new LinkedHashSet<>();
		Set<String> after = new LinkedHashSet<>();
		for (FilterRule rule : rules) {
			for (AppliedPolicy applied : rule.policies()) {
				(rule.beforeSecurity() ? before : after).add(applied.policy().name());
			}
		}
		before.retainAll(after);
		for (String policy : before) {
			logger.warn("Rate-limit policy '" + policy + "' is named by a filter with before-security and by another"
					+ " filter: they decide a request apart, so one that both match is charged twice; name it in one"
					+ " of them");
		}
	}

	/**
	 * Checks that the policies of a filter that runs before Spring Security can be
	 * decided there: no caller is authenticated yet, so a principal or API-key key would
	 * fall back to the address anyway (and a SpEL or bean key may read what is not there
	 * yet), and every caller would get the default tier.
	 */
	private static void checkBeforeSecurity(RateLimitProperties.Filter filter, String path, PolicyRegistry registry,
			List<Problem> problems) {
		for (int i = 0; i < filter.getPolicies().size(); i++) {
			Policy policy = registry.find(filter.getPolicies().get(i).trim());
			if (policy == null) {
				continue;
			}
			String key = policy.keyStrategy().trim();
			String strategy = key.toLowerCase(Locale.ROOT);
			if (!strategy.equals("ip") && !strategy.equals(KeyResolverFactory.GLOBAL_KEY)) {
				problems.add(new Problem(path + ".policies[" + i + "]",
						"names policy '" + policy.name() + "', keyed by '" + key
								+ "', but a filter with before-security runs before any caller is"
								+ " authenticated; key the policy by 'ip' or 'global', or remove before-security"));
			}
			if (!policy.tiers().isEmpty()) {
				problems.add(new Problem(path + ".policies[" + i + "]", "names policy '" + policy.name()
						+ "', which has tiers, but a filter with before-security runs before any caller has a tier;"
						+ " give the policy 'limits' instead, or remove before-security"));
			}
			RateLimitCondition countIf = policy.countIf();
			if (countIf != null && countIf.readsVariable("principal")) {
				problems.add(new Problem(path + ".policies[" + i + "]",
						"names policy '" + policy.name() + "', whose count-if '" + countIf
								+ "' reads #principal, which is always null before Spring"
								+ " Security; read #response and #request only, or remove before-security"));
			}
		}
	}

	/**
	 * Parses the condition of a filter: none when it is not set or blank.
	 */
	private static @Nullable RateLimitCondition condition(RateLimitProperties.Filter filter, String path,
			List<Problem> problems) {
		String text = filter.getWhen();
		if (text == null || text.isBlank()) {
			return null;
		}
		try {
			RateLimitCondition when = RateLimitCondition.parse(text);
			for (String variable : when.unknownRequestVariables()) {
				String hint = variable.equals("response")
						? "; a condition is decided before the handler runs, when there is no response yet"
						: "; it can read #request and #principal";
				problems.add(new Problem(path + ".when", "'" + text.trim() + "' reads #" + variable
						+ ", which a filter's request does not have" + hint));
			}
			return when;
		}
		catch (IllegalArgumentException ex) {
			problems.add(new Problem(path + ".when", ex.getMessage()));
			return null;
		}
	}

	private static List<PathPattern> patterns(RateLimitProperties.Filter filter, String path, List<Problem> problems) {
		if (filter.getPatterns().isEmpty()) {
			problems.add(new Problem(path + ".patterns", "is empty; list the paths to limit, such as /api/**"));
		}
		List<PathPattern> patterns = new ArrayList<>();
		for (int i = 0; i < filter.getPatterns().size(); i++) {
			String pattern = filter.getPatterns().get(i);
			try {
				patterns.add(PathPatternParser.defaultInstance.parse(pattern));
			}
			catch (PatternParseException | PatternSyntaxException ex) {
				// the second: a capture whose regex does not compile, such as /a{id:[}
				problems.add(new Problem(path + ".patterns[" + i + "]",
						"'" + pattern + "' is not a valid path pattern: " + ex.getMessage()));
			}
		}
		return patterns;
	}

	private static Set<String> methods(RateLimitProperties.Filter filter, String path, List<Problem> problems) {
		Set<String> methods = new LinkedHashSet<>();
		for (int i = 0; i < filter.getMethods().size(); i++) {
			String method = filter.getMethods().get(i).trim().toUpperCase(Locale.ROOT);
			if (!HTTP_METHODS.contains(method)) {
				problems.add(new Problem(path + ".methods[" + i + "]", "'" + filter.getMethods().get(i)
						+ "' is not an HTTP method; use GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS or TRACE"));
			}
			methods.add(method);
		}
		return methods;
	}

	private static List<AppliedPolicy> policies(RateLimitProperties.Filter filter, String path, PolicyRegistry registry,
			List<Problem> problems, boolean warn) {
		if (filter.getPolicies().isEmpty()) {
			problems.add(new Problem(path + ".policies", "is empty; name the policies that apply"));
		}
		List<AppliedPolicy> policies = new ArrayList<>();
		for (int i = 0; i < filter.getPolicies().size(); i++) {
			String name = filter.getPolicies().get(i).trim();
			Policy policy = registry.find(name);
			if (policy == null) {
				problems.add(new Problem(path + ".policies[" + i + "]", "names policy '" + name
						+ "', which is not defined under ratelimit.policies; defined policies: " + registry.names()));
			}
			else {
				policies.add(AppliedPolicy.of(policy));
				if (warn) {
					checkKeyVariables(policy, path);
				}
			}
		}
		return policies;
	}

	/**
	 * Warns of a policy whose key expression reads a variable that a filter's request
	 * does not have. Only a request that the filter leaves to a {@code @RateLimited}
	 * handler method has it, if the method has that parameter, since the handler's
	 * decision evaluates the key with the method's arguments; any other request reads
	 * {@code null} there. Not an error: a filter in front of such handlers only works.
	 */
	private static void checkKeyVariables(Policy policy, String path) {
		RateLimitExpression key = policy.keyExpression();
		if (key == null) {
			return;
		}
		for (String variable : key.unknownRequestVariables()) {
			logger.warn("ratelimit.policies." + policy.name() + ".key '" + key + "' reads #" + variable + ", which the"
					+ " requests of " + path + " have only when the filter leaves them to a @RateLimited handler method"
					+ " with that parameter; any other request reads null there (a key of null falls back to the"
					+ " client address, and calling a method on it answers 400)");
		}
	}

	private static void checkDuplicates(int index, List<String> patterns, Set<String> methods,
			List<List<String>> earlierPatterns, List<Set<String>> earlierMethods, List<Problem> problems) {
		for (int earlier = 0; earlier < earlierPatterns.size(); earlier++) {
			Set<String> otherMethods = earlierMethods.get(earlier);
			boolean overlap = methods.isEmpty() || otherMethods.isEmpty() || !Collections
				.disjoint(FilterRule.matchedMethods(methods), FilterRule.matchedMethods(otherMethods));
			if (!overlap) {
				continue;
			}
			// a rule for GET also limits HEAD (FilterRule), so GET and HEAD overlap
			boolean onlyThroughHead = !methods.isEmpty() && !otherMethods.isEmpty()
					&& Collections.disjoint(methods, otherMethods);
			String throughHead = onlyThroughHead ? " (a filter for GET also limits HEAD)" : "";
			for (int i = 0; i < patterns.size(); i++) {
				if (earlierPatterns.get(earlier).contains(patterns.get(i))) {
					problems.add(new Problem("ratelimit.filters[" + index + "].patterns[" + i + "]",
							"'" + patterns.get(i) + "' is also a pattern of ratelimit.filters[" + earlier
									+ "] for the same methods" + throughHead
									+ ", with its own policies and cost; merge the two filters"
									+ " or give them disjoint 'methods'"));
				}
			}
		}
	}

}
