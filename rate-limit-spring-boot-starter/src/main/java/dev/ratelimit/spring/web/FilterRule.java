package dev.ratelimit.spring.web;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitCost;

/**
 * One entry of {@code ratelimit.filters}: the request paths and methods it matches, with
 * patterns compiled once, the policies it applies, the cost of a request and the
 * condition ({@code when}) under which it applies, if any. Immutable.
 */
public final class FilterRule {

	private final List<PathPattern> patterns;

	private final Set<String> methods;

	private final Set<String> matchedMethods;

	private final List<AppliedPolicy> policies;

	private final RateLimitCost cost;

	private final @Nullable RateLimitCondition when;

	private final boolean enforces;

	private final boolean beforeSecurity;

	/**
	 * Creates a rule that applies to every matching request.
	 * @param patterns the compiled path patterns
	 * @param methods the upper-case HTTP methods, empty for all; {@code GET} also matches
	 * {@code HEAD}, which Spring MVC answers with the {@code GET} handler
	 * @param policies the policies
	 * @param cost the cost of a matching request
	 */
	public FilterRule(List<PathPattern> patterns, Set<String> methods, List<AppliedPolicy> policies,
			RateLimitCost cost) {
		this(patterns, methods, policies, cost, null);
	}

	/**
	 * Creates a rule.
	 * @param patterns the compiled path patterns
	 * @param methods the upper-case HTTP methods, empty for all; {@code GET} also matches
	 * {@code HEAD}, which Spring MVC answers with the {@code GET} handler
	 * @param policies the policies
	 * @param cost the cost of a matching request
	 * @param when the condition under which the rule applies to a matching request, or
	 * {@code null} to apply to every one
	 */
	public FilterRule(List<PathPattern> patterns, Set<String> methods, List<AppliedPolicy> policies, RateLimitCost cost,
			@Nullable RateLimitCondition when) {
		this(patterns, methods, policies, cost, when, false);
	}

	/**
	 * Creates a rule that applies before or after Spring Security.
	 * @param patterns the compiled path patterns
	 * @param methods the upper-case HTTP methods, empty for all; {@code GET} also matches
	 * {@code HEAD}, which Spring MVC answers with the {@code GET} handler
	 * @param policies the policies
	 * @param cost the cost of a matching request
	 * @param when the condition under which the rule applies to a matching request, or
	 * {@code null} to apply to every one
	 * @param beforeSecurity whether the rule applies before Spring Security authenticates
	 * the request, by the filter that runs ahead of it
	 */
	public FilterRule(List<PathPattern> patterns, Set<String> methods, List<AppliedPolicy> policies, RateLimitCost cost,
			@Nullable RateLimitCondition when, boolean beforeSecurity) {
		this.beforeSecurity = beforeSecurity;
		this.patterns = List.copyOf(patterns);
		this.methods = Set.copyOf(methods);
		this.matchedMethods = matchedMethods(this.methods);
		this.policies = List.copyOf(policies);
		this.cost = cost;
		this.when = when;
		this.enforces = this.policies.stream().anyMatch((applied) -> !applied.policy().isShadow());
	}

	/**
	 * Returns whether the rule matches a request.
	 * @param method the request method
	 * @param path the request path within the application
	 * @return whether the method and the path match; a rule for {@code GET} matches
	 * {@code HEAD} too
	 */
	public boolean matches(String method, PathContainer path) {
		if (!this.matchedMethods.isEmpty() && !this.matchedMethods.contains(method.toUpperCase(Locale.ROOT))) {
			return false;
		}
		for (PathPattern pattern : this.patterns) {
			if (pattern.matches(path)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether the rule matches a request.
	 * @param request the request
	 * @return whether it matches
	 */
	public boolean matches(HttpServletRequest request) {
		return matches(request.getMethod(), RateLimitFilter.pathWithinApplication(request));
	}

	/**
	 * Returns the path patterns.
	 * @return the patterns
	 */
	public List<PathPattern> patterns() {
		return this.patterns;
	}

	/**
	 * Returns the HTTP methods that a rule for some methods matches: those, and
	 * {@code HEAD} with {@code GET}.
	 * @param methods the upper-case methods as configured, empty for all
	 * @return the methods matched, empty for all; unmodifiable
	 */
	public static Set<String> matchedMethods(Set<String> methods) {
		if (!methods.contains("GET") || methods.contains("HEAD")) {
			return Set.copyOf(methods);
		}
		Set<String> matched = new HashSet<>(methods);
		matched.add("HEAD");
		return Set.copyOf(matched);
	}

	/**
	 * Returns the HTTP methods as configured, empty for all ({@code GET} matches
	 * {@code HEAD} too).
	 * @return the methods
	 */
	public Set<String> methods() {
		return this.methods;
	}

	/**
	 * Returns the policies.
	 * @return the policies
	 */
	public List<AppliedPolicy> policies() {
		return this.policies;
	}

	/**
	 * Returns whether the rule names an enforced policy. Only such a rule's cost counts
	 * in what a request's enforced policies are charged, and only such a rule refuses a
	 * request whose cost cannot be evaluated.
	 * @return whether a policy of the rule is not a shadow policy
	 */
	public boolean enforces() {
		return this.enforces;
	}

	/**
	 * Returns the cost of a matching request.
	 * @return the cost
	 */
	public RateLimitCost cost() {
		return this.cost;
	}

	/**
	 * Returns the condition under which the rule applies to a matching request.
	 * @return the condition, or {@code null} if the rule applies to every matching
	 * request
	 */
	public @Nullable RateLimitCondition when() {
		return this.when;
	}

	/**
	 * Returns whether the rule applies before Spring Security authenticates the request.
	 * @return whether it runs ahead of Spring Security
	 */
	public boolean beforeSecurity() {
		return this.beforeSecurity;
	}

	@Override
	public String toString() {
		return "FilterRule[patterns=" + this.patterns + ", methods=" + this.methods + ", policies="
				+ this.policies.stream().map((applied) -> applied.policy().name()).toList() + ", cost=" + this.cost
				+ ((this.when != null) ? ", when=" + this.when : "") + (this.beforeSecurity ? ", before-security" : "")
				+ "]";
	}

}
