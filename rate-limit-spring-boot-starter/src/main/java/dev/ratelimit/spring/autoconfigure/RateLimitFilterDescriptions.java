package dev.ratelimit.spring.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.web.util.pattern.PathPattern;

import dev.ratelimit.spring.actuate.FilterDescriptor;
import dev.ratelimit.spring.web.FilterRule;
import dev.ratelimit.spring.web.RateLimitFilter;

/**
 * Describes the rules of the application's rate-limit filters for the endpoint; loaded
 * only in a servlet application.
 */
final class RateLimitFilterDescriptions {

	private RateLimitFilterDescriptions() {
	}

	static List<RateLimitFilter> filters(ListableBeanFactory beanFactory) {
		Set<RateLimitFilter> filters = new LinkedHashSet<>();
		for (FilterRegistrationBean<?> registration : beanFactory
			.getBeansOfType(FilterRegistrationBean.class, false, false)
			.values()) {
			if (registration.getFilter() instanceof RateLimitFilter filter) {
				filters.add(filter);
			}
		}
		filters.addAll(beanFactory.getBeansOfType(RateLimitFilter.class, false, false).values());
		return new ArrayList<>(filters);
	}

	static List<FilterDescriptor> describe(ListableBeanFactory beanFactory) {
		List<FilterDescriptor> descriptors = new ArrayList<>();
		for (RateLimitFilter filter : filters(beanFactory)) {
			for (FilterRule rule : filter.getRules()) {
				descriptors
					.add(new FilterDescriptor(rule.patterns().stream().map(PathPattern::getPatternString).toList(),
							rule.methods().stream().sorted().toList(),
							rule.policies().stream().map((applied) -> applied.policy().name()).toList(),
							rule.cost().toString(), (rule.when() != null) ? rule.when().toString() : null));
			}
		}
		return descriptors;
	}

}
