package dev.ratelimit.spring.autoconfigure;

import java.util.Map;
import java.util.Objects;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

import dev.ratelimit.spring.autoconfigure.RateLimitProperties.Backend;

/**
 * The condition of {@link ConditionalOnRateLimitBackend}. An unset or empty
 * {@code ratelimit.backend} is the memory backend, as for the properties. A value that
 * does not bind (neither backend) also matches the memory backend, whose limiter then
 * binds the properties, so that start-up fails with Boot's message naming
 * {@code ratelimit.backend} rather than with a missing limiter bean.
 */
class OnRateLimitBackendCondition extends SpringBootCondition {

	private static final String PROPERTY = "ratelimit.backend";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, Object> attributes = Objects
			.requireNonNull(metadata.getAnnotationAttributes(ConditionalOnRateLimitBackend.class.getName()));
		Backend wanted = (Backend) attributes.get("value");
		Backend bound;
		try {
			bound = Binder.get(context.getEnvironment()).bind(PROPERTY, Backend.class).orElse(Backend.MEMORY);
		}
		catch (BindException ex) {
			return (wanted == Backend.MEMORY)
					? ConditionOutcome.match(PROPERTY + " does not bind: the memory backend reports it")
					: ConditionOutcome.noMatch(PROPERTY + " does not bind");
		}
		return (bound == wanted) ? ConditionOutcome.match(PROPERTY + " is " + bound)
				: ConditionOutcome.noMatch(PROPERTY + " is " + bound);
	}

}
