package dev.ratelimit.spring;

import java.util.Collection;
import java.util.Locale;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * When a filter rule or a {@code @RateLimited} annotation applies: a SpEL expression
 * {@code #{...}} evaluated for each call, or the constant {@code true} or {@code false}.
 * Immutable.
 */
public final class RateLimitCondition {

	private static final RateLimitCondition TRUE = new RateLimitCondition(true, null);

	private static final RateLimitCondition FALSE = new RateLimitCondition(false, null);

	private static final String NOT_A_BOOLEAN = "it is neither true nor false";

	private final boolean constant;

	private final @Nullable RateLimitExpression expression;

	private RateLimitCondition(boolean constant, @Nullable RateLimitExpression expression) {
		this.constant = constant;
		this.expression = expression;
	}

	/**
	 * Parses a configured condition: SpEL {@code #{...}}, or {@code true} or
	 * {@code false} in any case.
	 * @param text the condition
	 * @return the condition
	 * @throws IllegalArgumentException saying what is wrong
	 */
	public static RateLimitCondition parse(String text) {
		if (RateLimitExpression.isExpression(text)) {
			return new RateLimitCondition(true, RateLimitExpression.parse(text));
		}
		String trimmed = text.trim().toLowerCase(Locale.ROOT);
		if (trimmed.equals("true")) {
			return TRUE;
		}
		if (trimmed.equals("false")) {
			return FALSE;
		}
		throw new IllegalArgumentException("'" + text + "' is not a condition; write SpEL that gives true or false,"
				+ " such as #{#request.getHeader('X-Internal') == null}, or true or false");
	}

	/**
	 * Returns the variables that the condition reads and that no call has (see
	 * {@link RateLimitExpression#unknownVariables}); none for a constant.
	 * @param parameters the names of the arguments the calls have
	 * @return the unknown names
	 */
	public Set<String> unknownVariables(Collection<String> parameters) {
		RateLimitExpression expression = this.expression;
		return (expression != null) ? expression.unknownVariables(parameters) : Set.of();
	}

	/**
	 * Returns the variables that the condition reads and that a request decided by the
	 * filter does not have (see {@link RateLimitExpression#unknownRequestVariables});
	 * none for a constant.
	 * @return the unknown names
	 */
	public Set<String> unknownRequestVariables() {
		RateLimitExpression expression = this.expression;
		return (expression != null) ? expression.unknownRequestVariables() : Set.of();
	}

	/**
	 * Returns whether the condition reads a variable; never for a constant.
	 * @param name the variable's name, without {@code #}
	 * @return whether it reads {@code #name}
	 */
	public boolean readsVariable(String name) {
		RateLimitExpression expression = this.expression;
		return expression != null && expression.readsVariable(name);
	}

	/**
	 * Returns whether the condition holds for a call.
	 * @param context the call
	 * @return whether what the condition belongs to applies to the call
	 * @throws RateLimitEvaluationException if the expression fails on a value that the
	 * call carries (see {@link RateLimitExpression#evaluate}), or gives {@code null} or
	 * anything but a boolean or the text {@code true} or {@code false}
	 * @throws IllegalStateException if the expression fails otherwise in SpEL; an
	 * exception thrown by application code that the expression calls propagates as it is
	 */
	public boolean test(RateLimitContext context) {
		RateLimitExpression expression = this.expression;
		if (expression == null) {
			return this.constant;
		}
		Object value = expression.evaluate(context);
		if (value instanceof Boolean bool) {
			return bool;
		}
		if (value instanceof CharSequence text) {
			// a header or parameter read as it is
			String trimmed = text.toString().trim();
			if (trimmed.equalsIgnoreCase("true")) {
				return true;
			}
			if (trimmed.equalsIgnoreCase("false")) {
				return false;
			}
		}
		throw new RateLimitEvaluationException(expression.text(),
				(value != null) ? NOT_A_BOOLEAN : "it evaluated to null", null);
	}

	@Override
	public String toString() {
		return (this.expression != null) ? this.expression.text() : Boolean.toString(this.constant);
	}

}
