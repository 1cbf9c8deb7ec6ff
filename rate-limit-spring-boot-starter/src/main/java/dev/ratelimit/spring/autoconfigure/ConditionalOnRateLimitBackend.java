package dev.ratelimit.spring.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches when {@code ratelimit.backend} binds to the given backend, as
 * {@link RateLimitProperties} binds it: a quoted, padded or mixed-case value matches,
 * where {@code @ConditionalOnProperty(havingValue = ...)}, which compares the text, would
 * match neither backend and start with no limiter at all.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
@Documented
@Conditional(OnRateLimitBackendCondition.class)
@interface ConditionalOnRateLimitBackend {

	/**
	 * The backend.
	 * @return the backend
	 */
	RateLimitProperties.Backend value();

}
