package dev.ratelimit.spring.web;

import java.util.List;

/**
 * A rate-limit filter of either web stack ({@link RateLimitFilter} for servlets,
 * {@code web.reactive.RateLimitWebFilter} for WebFlux): the {@code ratelimit.filters}
 * rules it applies, which the {@code ratelimits} endpoint describes and a configuration
 * reload replaces.
 */
public interface RuleBasedFilter {

	/**
	 * Returns the rules the filter applies.
	 * @return the rules, in configuration order
	 */
	List<FilterRule> getRules();

	/**
	 * Replaces the rules from the next request on.
	 * @param rules the new rules
	 */
	void replaceRules(List<FilterRule> rules);

}
