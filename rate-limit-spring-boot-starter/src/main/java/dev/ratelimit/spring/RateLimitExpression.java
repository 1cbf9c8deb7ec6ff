package dev.ratelimit.spring;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * A SpEL expression written {@code #{...}} in configuration or in an annotation, parsed once when the application
 * starts and evaluated for each call against a {@link RateLimitContext}: method arguments by name, {@code #request},
 * {@code #principal}, {@code #args} and {@code @beans}. Thread-safe.
 */
public final class RateLimitExpression {

	private static final SpelExpressionParser PARSER = new SpelExpressionParser();

	private final String text;

	private final Expression expression;

	private RateLimitExpression(String text, Expression expression) {
		this.text = text;
		this.expression = expression;
	}

	/**
	 * Returns whether a configured value is an expression, that is, written {@code #{...}}.
	 * @param text the configured value
	 * @return whether it is an expression
	 */
	public static boolean isExpression(String text) {
		String trimmed = text.trim();
		return trimmed.startsWith("#{") && trimmed.endsWith("}");
	}

	/**
	 * Parses an expression written {@code #{...}}.
	 * @param text the expression with its {@code #{} and {@code }}
	 * @return the parsed expression
	 * @throws IllegalArgumentException if the text is not {@code #{...}} or does not parse, saying why
	 */
	public static RateLimitExpression parse(String text) {
		if (!isExpression(text)) {
			throw new IllegalArgumentException("'" + text + "' is not an expression; write SpEL as #{...}");
		}
		String trimmed = text.trim();
		String body = trimmed.substring(2, trimmed.length() - 1).trim();
		if (body.isEmpty()) {
			throw new IllegalArgumentException("the expression '" + text + "' is empty");
		}
		try {
			return new RateLimitExpression(trimmed, PARSER.parseExpression(body));
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException("the expression '" + text + "' does not parse: " + ex.getMessage());
		}
	}

	/**
	 * Evaluates the expression.
	 * @param context the call
	 * @return the value, possibly {@code null}
	 * @throws IllegalStateException if evaluation fails, naming the expression
	 */
	public @Nullable Object evaluate(RateLimitContext context) {
		try {
			return this.expression.getValue(context.evaluationContext());
		}
		catch (EvaluationException ex) {
			throw new IllegalStateException("Rate-limit expression " + this.text + " failed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Returns the expression as written.
	 * @return the text, such as {@code #{#queries.size()}}
	 */
	public String text() {
		return this.text;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof RateLimitExpression expression && expression.text.equals(this.text);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.text);
	}

	@Override
	public String toString() {
		return this.text;
	}

}
