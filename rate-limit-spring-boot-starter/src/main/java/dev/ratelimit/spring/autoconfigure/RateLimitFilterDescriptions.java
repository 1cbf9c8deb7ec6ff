package dev.ratelimit.spring.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.util.ClassUtils;
import org.springframework.web.util.pattern.PathPattern;

import dev.ratelimit.spring.actuate.FilterDescriptor;
import dev.ratelimit.spring.web.FilterRule;
import dev.ratelimit.spring.web.RateLimitFilter;
import dev.ratelimit.spring.web.RuleBasedFilter;

/**
 * Finds the application's rate-limit filters, of either web stack, and describes their
 * rules for the endpoint; loaded only where spring-web is.
 */
final class RateLimitFilterDescriptions {

	private RateLimitFilterDescriptions() {
	}

	private static final boolean SERVLET_PRESENT = ClassUtils.isPresent("jakarta.servlet.Filter",
			RateLimitFilterDescriptions.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.boot.web.servlet.FilterRegistrationBean",
					RateLimitFilterDescriptions.class.getClassLoader());

	static List<RuleBasedFilter> filters(ListableBeanFactory beanFactory) {
		Set<RuleBasedFilter> filters = new LinkedHashSet<>();
		if (SERVLET_PRESENT) {
			filters.addAll(ServletFilters.registered(beanFactory));
		}
		filters.addAll(beanFactory.getBeansOfType(RuleBasedFilter.class, false, false).values());
		return new ArrayList<>(filters);
	}

	static List<FilterDescriptor> describe(ListableBeanFactory beanFactory) {
		List<FilterDescriptor> descriptors = new ArrayList<>();
		for (RuleBasedFilter filter : filters(beanFactory)) {
			for (FilterRule rule : filter.getRules()) {
				descriptors
					.add(new FilterDescriptor(rule.patterns().stream().map(PathPattern::getPatternString).toList(),
							rule.methods().stream().sorted().toList(),
							rule.policies().stream().map((applied) -> applied.policy().name()).toList(),
							rule.cost().toString(), (rule.when() != null) ? rule.when().toString() : null,
							rule.beforeSecurity()));
			}
		}
		return descriptors;
	}

	/**
	 * The servlet filters registered through a {@code FilterRegistrationBean}; loaded
	 * only where the servlet API is.
	 */
	private static final class ServletFilters {

		static List<RuleBasedFilter> registered(ListableBeanFactory beanFactory) {
			List<RuleBasedFilter> filters = new ArrayList<>();
			for (FilterRegistrationBean<?> registration : beanFactory
				.getBeansOfType(FilterRegistrationBean.class, false, false)
				.values()) {
				if (registration.getFilter() instanceof RateLimitFilter filter) {
					filters.add(filter);
				}
			}
			return filters;
		}

	}

}
