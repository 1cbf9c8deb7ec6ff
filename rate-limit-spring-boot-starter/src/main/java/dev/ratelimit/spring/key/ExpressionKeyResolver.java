package dev.ratelimit.spring.key;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitExpression;

/**
 * Resolves a key with a SpEL expression parsed at start-up, the {@code #{...}} strategy.
 */
public final class ExpressionKeyResolver implements KeyResolver {

	private final RateLimitExpression expression;

	/**
	 * Creates a resolver.
	 * @param expression the parsed expression
	 */
	public ExpressionKeyResolver(RateLimitExpression expression) {
		this.expression = Objects.requireNonNull(expression, "expression must not be null");
	}

	@Override
	public @Nullable String resolveKey(RateLimitContext context) {
		Object value = this.expression.evaluate(context);
		return (value != null) ? value.toString() : null;
	}

	@Override
	public String toString() {
		return this.expression.text();
	}

}
