package dev.ratelimit.spring.key;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitExpression;

/**
 * Resolves a key with a SpEL expression parsed at start-up, the {@code #{...}} strategy.
 */
public final class ExpressionKeyResolver implements KeyResolver {

	private static final String PREFIX = "expr:";

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
		String text = (value != null) ? value.toString() : null;
		return (text == null || text.isBlank()) ? null : storedKey(text);
	}

	/**
	 * Returns the key of an expression's value: prefixed, so that no value can name
	 * another strategy's key (such as the {@code ip:} key of a caller for whom the
	 * expression gives nothing).
	 */
	@Override
	public String storedKey(String client) {
		return PREFIX + client;
	}

	@Override
	public String toString() {
		return this.expression.text();
	}

}
