package dev.ratelimit.spring.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.web.context.reactive.ReactiveWebApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

import dev.ratelimit.spring.RateLimitConfigurationException;

/**
 * Reports {@code ratelimit.filters} in an application where no rate-limit filter applies
 * them: the servlet filter needs Spring MVC, the reactive one Spring WebFlux. A reactive
 * web application without WebFlux's dispatcher, whose every request would pass unlimited,
 * fails to start; any other application (not a web application, or a servlet one without
 * Spring MVC) is warned, since it may share its configuration with one that applies the
 * rules.
 */
final class UnappliedFilterRules {

	private static final Log logger = LogFactory.getLog(UnappliedFilterRules.class);

	// spring-web may be absent from an application that is not a web application
	private static final String SERVLET_CONTEXT = "org.springframework.web.context.WebApplicationContext";

	private static final String NEEDS = "the rate-limit filter that applies them needs a servlet web application with"
			+ " Spring MVC, or a reactive one with Spring WebFlux";

	private UnappliedFilterRules() {
	}

	/**
	 * Checks the filter rules of an application that has no rate-limit filter.
	 * @param properties the configuration
	 * @param context the application context
	 * @return the check, done
	 * @throws RateLimitConfigurationException if there are filter rules in a reactive web
	 * application
	 */
	static UnappliedFilterRules check(RateLimitProperties properties, ApplicationContext context) {
		int rules = properties.getFilters().size();
		if (rules == 0) {
			return new UnappliedFilterRules();
		}
		String count = rules + ((rules == 1) ? " rule" : " rules");
		if (context instanceof ReactiveWebApplicationContext) {
			throw new RateLimitConfigurationException("ratelimit.filters",
					"has " + count + ", but this is a reactive web application, where they would never apply: " + NEEDS
							+ "; add spring-webflux, or remove them");
		}
		ClassLoader loader = context.getClassLoader();
		boolean servlet = ClassUtils.isPresent(SERVLET_CONTEXT, loader)
				&& ClassUtils.resolveClassName(SERVLET_CONTEXT, loader).isInstance(context);
		String application = servlet ? "a servlet web application without Spring MVC" : "not a web application";
		logger.warn("ratelimit.filters has " + count + ", which this application does not apply: it is " + application
				+ ", and " + NEEDS);
		return new UnappliedFilterRules();
	}

}
