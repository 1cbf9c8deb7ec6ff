package dev.ratelimit.spring;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when a cost or key expression cannot be evaluated for a call because of what the call carries, before
 * anything is charged: a cost that evaluates to {@code null}, to a negative number or to text that is not a whole
 * number, or an expression that fails on a value the call supplies (a request header or parameter that is missing or
 * malformed). In a web request the starter answers it with {@code 400 Bad Request} and a problem whose detail names
 * the policy and says why, in fixed words that never repeat the request's values.
 *
 * <p>
 * It is the client's fault only when the failure clearly comes from the request, so an evaluation failure is
 * reported with this exception in these cases only:
 * <ul>
 * <li>SpEL met {@code null} where it needed an object (a method call, a property read or an index on
 * {@code null}), could not convert a value to the type needed, or found an index out of bounds;</li>
 * <li>a JDK method that the expression calls (such as {@code Long.parseLong} or a method of {@code String}) threw a
 * {@link NullPointerException}, an {@link IllegalArgumentException}, an {@link IndexOutOfBoundsException}, an
 * {@link ArithmeticException} or a {@link java.time.DateTimeException}, with no code of the application between
 * that method and SpEL.</li>
 * </ul>
 * Anything else is an error of the application and propagates as one (a {@code 500}): an expression that names a
 * method, property, type or bean that does not exist, an operator applied to types it does not support, a cost
 * that gives neither a number nor text ({@link IllegalStateException}), and any exception thrown by an application
 * bean that the expression calls, whatever its type. So is a failure for a {@code @RateLimited} method that is not
 * the handler of a web request: its arguments come from the application, so the interceptor throws an
 * {@link IllegalStateException} caused by this exception. Nor is this exception thrown for shadow policies, which
 * never refuse a call: a shadow policy whose key cannot be evaluated for a call, or a cost whose policies are all
 * shadow policies, is not decided for that call instead.
 */
public class RateLimitEvaluationException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String expression;

	private final String reason;

	private final @Nullable String part;

	private final @Nullable String owner;

	/**
	 * Creates an exception.
	 * @param expression the expression as written, such as {@code #{#queries.size()}}, for the log
	 * @param reason why it could not be evaluated, in fixed words that never repeat the call's values, such as
	 * {@code it evaluated to null}
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

	private RateLimitEvaluationException attributed(String part, String owner) {
		RateLimitEvaluationException attributed = new RateLimitEvaluationException(this.expression, this.reason, part,
				owner, getCause());
		attributed.setStackTrace(getStackTrace());
		return attributed;
	}

	/**
	 * Returns the expression as written. It belongs in the log, not in a response: it is the application's.
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
	 * Returns the detail of a problem response: what could not be evaluated and why, without the expression or any
	 * value of the request.
	 * @return the detail, such as {@code The cost expression of policy batch could not be evaluated for this request:
	 * it evaluated to null}
	 */
	public String getDetail() {
		String what = (this.part != null) ? "The " + this.part + " expression" : "A rate-limit expression";
		return what + ((this.owner != null) ? " of " + this.owner : "")
				+ " could not be evaluated for this request: " + this.reason;
	}

}
