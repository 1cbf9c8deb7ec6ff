package dev.ratelimit.spring;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Thrown, before anything is charged, when a cost, key or condition ({@code when})
 * expression cannot be evaluated for what a call carries (a missing or malformed header
 * or parameter). A web request gets {@code 400 Bad Request} in fixed words; a
 * {@code @RateLimited} method outside a request gets an {@link IllegalStateException}
 * with this exception suppressed.
 */
public class RateLimitEvaluationException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String expression;

	private final String reason;

	private final @Nullable String part;

	private final @Nullable String owner;

	/**
	 * Creates an exception.
	 * @param expression the expression as written, such as {@code #{#queries.size()}},
	 * for the log
	 * @param reason why it could not be evaluated, in fixed words that never repeat the
	 * call's values, such as {@code it evaluated to null}
	 * @param cause the failure of the evaluation, if any
	 */
	public RateLimitEvaluationException(String expression, String reason, @Nullable Throwable cause) {
		this(expression, reason, null, null, cause);
	}

	private RateLimitEvaluationException(String expression, String reason, @Nullable String part,
			@Nullable String owner, @Nullable Throwable cause) {
		super(message(expression, reason, part, owner), cause);
		this.expression = Objects.requireNonNull(expression, "expression must not be null");
		this.reason = Objects.requireNonNull(reason, "reason must not be null");
		this.part = part;
		this.owner = owner;
	}

	private static String message(String expression, String reason, @Nullable String part, @Nullable String owner) {
		return "Rate-limit " + ((part != null) ? part + " " : "") + "expression " + expression
				+ ((owner != null) ? " of " + owner : "") + " could not be evaluated for this call: " + reason;
	}

	/**
	 * Returns this failure as the failure of the cost of what the expression belongs to.
	 * @param owner what the cost belongs to, such as {@code policy batch}
	 * @return the exception naming it
	 */
	public RateLimitEvaluationException ofCost(String owner) {
		return attributed("cost", owner);
	}

	/**
	 * Returns this failure as the failure of the key of what the expression belongs to.
	 * @param owner what the key belongs to, such as {@code policy per-user}
	 * @return the exception naming it
	 */
	public RateLimitEvaluationException ofKey(String owner) {
		return attributed("key", owner);
	}

	/**
	 * Returns this failure as the failure of the condition ({@code when}) of what the
	 * expression belongs to.
	 * @param owner what the condition belongs to, such as
	 * {@code the filter for policy api}
	 * @return the exception naming it
	 */
	public RateLimitEvaluationException ofCondition(String owner) {
		return attributed("condition", owner);
	}

	private RateLimitEvaluationException attributed(String part, String owner) {
		RateLimitEvaluationException attributed = new RateLimitEvaluationException(this.expression, this.reason, part,
				owner, getCause());
		attributed.setStackTrace(getStackTrace());
		return attributed;
	}

	/**
	 * Returns the expression as written. It belongs in the log, not in a response: it is
	 * the application's.
	 * @return the expression
	 */
	public String getExpression() {
		return this.expression;
	}

	/**
	 * Returns why the expression could not be evaluated, in fixed words.
	 * @return the reason, such as {@code it is negative}
	 */
	public String getReason() {
		return this.reason;
	}

	/**
	 * Returns the detail of a problem response: what could not be evaluated and why,
	 * without the expression or any value of the request.
	 * @return the detail, such as
	 * {@code The cost expression of policy batch could not be evaluated for this request:
	 * it evaluated to null}
	 */
	public String getDetail() {
		String what = (this.part != null) ? "The " + this.part + " expression" : "A rate-limit expression";
		return what + ((this.owner != null) ? " of " + this.owner : "") + " could not be evaluated for this request: "
				+ this.reason;
	}

}
