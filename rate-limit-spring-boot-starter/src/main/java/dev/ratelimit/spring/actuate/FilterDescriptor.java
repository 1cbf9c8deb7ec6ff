package dev.ratelimit.spring.actuate;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * A filter rule, as the {@code ratelimits} endpoint describes it.
 *
 * @param patterns the request path patterns
 * @param methods the HTTP methods, empty for all
 * @param policies the names of the policies the rule applies
 * @param cost the cost of a matching request: a number or a SpEL expression
 * @param when the condition under which the rule applies, as configured, or {@code null}
 * if it applies to every matching request
 * @param beforeSecurity whether the rule applies before Spring Security authenticates the
 * request; shown only when it does
 */
public record FilterDescriptor(List<String> patterns, List<String> methods, List<String> policies, String cost,
		@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String when,
		@JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean beforeSecurity) {

	/**
	 * Describes a rule that applies after Spring Security.
	 * @param patterns the patterns
	 * @param methods the methods
	 * @param policies the policy names
	 * @param cost the cost
	 * @param when the condition
	 */
	public FilterDescriptor(List<String> patterns, List<String> methods, List<String> policies, String cost,
			@Nullable String when) {
		this(patterns, methods, policies, cost, when, false);
	}

	/**
	 * Copies the lists.
	 * @param patterns the patterns
	 * @param methods the methods
	 * @param policies the policy names
	 * @param cost the cost
	 * @param when the condition
	 * @param beforeSecurity whether the rule applies before Spring Security
	 */
	public FilterDescriptor {
		patterns = List.copyOf(patterns);
		methods = List.copyOf(methods);
		policies = List.copyOf(policies);
	}

}
