package dev.ratelimit.spring;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Collection;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The permits a call takes: a fixed number or a SpEL expression evaluated for each call.
 * Immutable.
 */
public final class RateLimitCost {

	private static final RateLimitCost ONE = new RateLimitCost(1, null);

	private final long fixed;

	private final @Nullable RateLimitExpression expression;

	private RateLimitCost(long fixed, @Nullable RateLimitExpression expression) {
		this.fixed = fixed;
		this.expression = expression;
	}

	/**
	 * Returns the cost of one permit.
	 * @return the cost
	 */
	public static RateLimitCost one() {
		return ONE;
	}

	/**
	 * Returns a fixed cost.
	 * @param permits the permits, at least 0
	 * @return the cost
	 */
	public static RateLimitCost of(long permits) {
		if (permits < 0) {
			throw new IllegalArgumentException("a cost must be at least 0 (was " + permits + ")");
		}
		return (permits == 1) ? ONE : new RateLimitCost(permits, null);
	}

	/**
	 * Parses a configured cost: a whole number or {@code #{...}}.
	 * @param text the cost
	 * @return the cost
	 * @throws IllegalArgumentException saying what is wrong
	 */
	public static RateLimitCost parse(String text) {
		if (RateLimitExpression.isExpression(text)) {
			return new RateLimitCost(-1, RateLimitExpression.parse(text));
		}
		try {
			return of(Long.parseLong(text.trim()));
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(
					"'" + text + "' is not a cost; write a whole number of permits such as 1, or SpEL such as #{...}");
		}
	}

	/**
	 * Returns the variables that the cost expression reads and that no call has (see
	 * {@link RateLimitExpression#unknownVariables}); none for a fixed cost.
	 * @param parameters the names of the arguments the calls have
	 * @return the unknown names
	 */
	public Set<String> unknownVariables(Collection<String> parameters) {
		RateLimitExpression expression = this.expression;
		return (expression != null) ? expression.unknownVariables(parameters) : Set.of();
	}

	/**
	 * Returns the variables that the cost expression reads and that a request decided by
	 * the filter does not have (see {@link RateLimitExpression#unknownRequestVariables});
	 * none for a fixed cost.
	 * @return the unknown names
	 */
	public Set<String> unknownRequestVariables() {
		RateLimitExpression expression = this.expression;
		return (expression != null) ? expression.unknownRequestVariables() : Set.of();
	}

	/**
	 * Returns whether the cost expression reads a variable; never for a fixed cost.
	 * @param name the variable's name, without {@code #}
	 * @return whether it reads {@code #name}
	 */
	public boolean readsVariable(String name) {
		RateLimitExpression expression = this.expression;
		return expression != null && expression.readsVariable(name);
	}

	/**
	 * Returns whether the cost is a fixed number.
	 * @return whether there is no expression
	 */
	public boolean isFixed() {
		return this.expression == null;
	}

	/**
	 * Returns the cost of a call.
	 * @param context the call
	 * @return the permits, at least 0
	 * @throws RateLimitEvaluationException if an expression fails on a value that the
	 * call carries, or gives {@code null}, a negative number, or text that is not a whole
	 * number of permits
	 * @throws IllegalStateException if an expression gives something that is neither a
	 * number nor text (such as a collection), which is wrong for every call
	 */
	public long evaluate(RateLimitContext context) {
		RateLimitExpression expression = this.expression;
		if (expression == null) {
			return this.fixed;
		}
		long cost = toPermits(expression.evaluate(context), expression);
		if (cost < 0) {
			throw new RateLimitEvaluationException(expression.text(), "it is negative", null);
		}
		return cost;
	}

	private static long toPermits(@Nullable Object value, RateLimitExpression expression) {
		if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
			return ((Number) value).longValue();
		}
		if (value instanceof Number number) {
			try {
				BigDecimal permits = new BigDecimal(number.toString());
				// a fractional cost is rounded up: half a permit still takes a permit
				// (and -0.5 is negative, not 0)
				return (permits.signum() < 0) ? -1 : permits.setScale(0, RoundingMode.CEILING).longValueExact();
			}
			catch (NumberFormatException ex) {
				// NaN or infinite: reported below
			}
			catch (ArithmeticException ex) {
				throw new RateLimitEvaluationException(expression.text(), "it is too large", ex);
			}
		}
		if (value instanceof CharSequence text) {
			try {
				return Long.parseLong(text.toString().trim());
			}
			catch (NumberFormatException ex) {
				// reported below
			}
		}
		else if (value != null && !(value instanceof Number)) {
			// a list, say, where its size was meant: wrong for every call, so the
			// application's error
			throw new IllegalStateException("Rate-limit cost " + expression.text() + " gave a "
					+ value.getClass().getName() + ", which is not a number of permits; write an expression that gives"
					+ " a number, such as #{#queries.size()} for a list, or text holding a whole number");
		}
		throw new RateLimitEvaluationException(expression.text(),
				(value != null) ? "it is not a whole number" : "it evaluated to null", null);
	}

	@Override
	public String toString() {
		return (this.expression != null) ? this.expression.text() : Long.toString(this.fixed);
	}

}
