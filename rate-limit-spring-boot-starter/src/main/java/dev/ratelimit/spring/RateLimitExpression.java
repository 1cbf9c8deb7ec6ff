package dev.ratelimit.spring;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.DateTimeException;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.MethodExecutor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.ReflectiveMethodExecutor;
import org.springframework.expression.spel.support.ReflectiveMethodResolver;
import org.springframework.util.ClassUtils;

/**
 * A SpEL expression written {@code #{...}} in configuration or in an annotation, parsed
 * once when the application starts and evaluated for each call against a
 * {@link RateLimitContext}: method arguments by name, {@code #request},
 * {@code #principal}, {@code #args} and {@code @beans}. Thread-safe.
 */
public final class RateLimitExpression {

	/**
	 * Interpreted, whatever {@code spring.expression.compiler.mode} says: a compiled
	 * expression fails with SpEL's own compiled-expression error, which would hide why a
	 * request could not be evaluated (and in mixed mode it would be evaluated again,
	 * calling its beans twice).
	 */
	private static final SpelExpressionParser PARSER = new SpelExpressionParser(
			new SpelParserConfiguration(SpelCompilerMode.OFF, null));

	private static final String MISSING_VALUE = "it reads a value that this request does not have";

	private static final String MALFORMED_VALUE = "a value it reads from this request does not have the expected form";

	private static final String SPEL_PACKAGE = "org.springframework.expression.";

	/**
	 * The variables of every call besides its arguments: those of
	 * {@link RateLimitContext} (with WebFlux's {@code #exchange}, which reads
	 * {@code null} in a servlet application), and SpEL's own.
	 */
	private static final Set<String> REQUEST_VARIABLES = Set.of("request", "exchange", "principal", "this", "root");

	private final String text;

	private final Expression expression;

	private RateLimitExpression(String text, Expression expression) {
		this.text = text;
		this.expression = expression;
	}

	/**
	 * Returns whether a configured value is an expression, that is, written
	 * {@code #{...}}.
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
	 * @throws IllegalArgumentException if the text is not {@code #{...}} or does not
	 * parse, saying why
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
		catch (StackOverflowError ex) {
			// SpEL's parser recurses once per level of nesting: thousands of brackets
			// exhaust the stack, which is
			// whole again once the parse has unwound
			throw new IllegalArgumentException(
					"the expression '" + abbreviate(text) + "' is nested too deeply to parse");
		}
	}

	/**
	 * Returns a text short enough for a message: its first 60 characters, and how many
	 * more there are.
	 */
	private static String abbreviate(String text) {
		return (text.length() <= 60) ? text : text.substring(0, 60) + "... (" + (text.length() - 60) + " more)";
	}

	/**
	 * Evaluates the expression.
	 * @param context the call
	 * @return the value, possibly {@code null}
	 * @throws RateLimitEvaluationException if evaluation fails on a value that the call
	 * carries, such as a request header that is missing or a parameter that
	 * {@code Long.parseLong} rejects: SpEL met {@code null}, could not convert a value or
	 * found an index out of bounds, or a JDK method that the expression calls threw one
	 * of the exceptions that {@link RateLimitEvaluationException} lists
	 * @throws IllegalStateException if evaluation fails otherwise in SpEL, naming the
	 * expression; an exception thrown by application code that the expression calls
	 * propagates as it is
	 */
	public @Nullable Object evaluate(RateLimitContext context) {
		try {
			return this.expression.getValue(context.evaluationContext());
		}
		catch (CallValueRejected ex) {
			throw new RateLimitEvaluationException(this.text, ex.reason, ex.getCause());
		}
		catch (RuntimeException ex) {
			String reason = failureOfTheCall(ex);
			if (reason != null) {
				throw new RateLimitEvaluationException(this.text, reason, ex);
			}
			if (ex instanceof EvaluationException) {
				throw new IllegalStateException("Rate-limit expression " + this.text + " failed: " + ex.getMessage(),
						ex);
			}
			// thrown by code that the expression calls, for its own reasons: its
			// exception to report
			throw ex;
		}
	}

	/**
	 * Returns why an evaluation failed when the failure clearly comes from a value that
	 * the call carries, such as a request header or parameter that is missing or
	 * malformed, and so is the caller's fault rather than the application's. That is so
	 * in two cases only:
	 * <ul>
	 * <li>SpEL itself met {@code null} where it needed an object (it called a method on
	 * {@code null}, read a property of it, indexed into it, or applied an arithmetic
	 * operator or {@code matches} to it), could not convert a value to the type needed
	 * ({@code TYPE_CONVERSION_ERROR}), or found an index out of bounds;</li>
	 * <li>a method of the JDK or of the request that the expression calls threw a
	 * {@link NullPointerException}, an {@link IllegalArgumentException} (such as the
	 * {@link NumberFormatException} of {@code Long.parseLong}), an
	 * {@link IndexOutOfBoundsException}, an {@link ArithmeticException} or a
	 * {@link DateTimeException}. The {@link CallMethodResolver} marks such a failure of a
	 * method call from the method SpEL invoked, whatever the stack trace; for what it
	 * does not see (a constructor, a property read), the exception counts as the call's
	 * if it was thrown by JDK code (a class in a {@code java.} or {@code jdk.} package)
	 * and its stack trace, from the frame that threw it down to SpEL, holds JDK code
	 * only, no code of the application.</li>
	 * </ul>
	 * Any other failure is the application's: a method, property, type or bean that does
	 * not exist (which fails for every call), an operator that does not apply to the
	 * operands' types, and any exception thrown by, or through, an application bean or
	 * other non-JDK code, whatever its type.
	 * @param failure what the evaluation threw
	 * @return the reason in fixed words, or {@code null} if the failure is not the call's
	 */
	static @Nullable String failureOfTheCall(Throwable failure) {
		Throwable thrown = failure;
		if (failure instanceof SpelEvaluationException spel) {
			switch (spel.getMessageCode()) {
				case METHOD_CALL_ON_NULL_OBJECT_NOT_ALLOWED, PROPERTY_OR_FIELD_NOT_READABLE_ON_NULL,
						CANNOT_INDEX_INTO_NULL_VALUE -> {
					return MISSING_VALUE;
				}
				case OPERATOR_NOT_SUPPORTED_BETWEEN_TYPES -> {
					return nullOperand(spel.getInserts()) ? MISSING_VALUE : null;
				}
				case INVALID_FIRST_OPERAND_FOR_MATCHES_OPERATOR, INVALID_SECOND_OPERAND_FOR_MATCHES_OPERATOR -> {
					// inserts: the operand itself
					Object[] inserts = spel.getInserts();
					return (inserts.length == 1 && inserts[0] == null) ? MISSING_VALUE : null;
				}
				case TYPE_CONVERSION_ERROR, ARRAY_INDEX_OUT_OF_BOUNDS, COLLECTION_INDEX_OUT_OF_BOUNDS,
						STRING_INDEX_OUT_OF_BOUNDS -> {
					return MALFORMED_VALUE;
				}
				case EXCEPTION_DURING_METHOD_INVOCATION, EXCEPTION_DURING_PROPERTY_READ, EXCEPTION_DURING_INDEX_READ,
						EXCEPTION_DURING_FUNCTION_CALL, CONSTRUCTOR_INVOCATION_PROBLEM -> {
					thrown = spel.getCause();
					while (thrown instanceof AccessException || thrown instanceof InvocationTargetException) {
						thrown = thrown.getCause();
					}
					if (thrown instanceof SpelEvaluationException inner) {
						// SpEL's own failure on the way in, such as converting a
						// parameter to the method's type
						return failureOfTheCall(inner);
					}
				}
				default -> {
					return null;
				}
			}
		}
		if (thrown == null || !thrownByTheJdkForTheExpression(thrown)) {
			return null;
		}
		return valueRejected(thrown);
	}

	/**
	 * Returns whether an arithmetic operator failed for want of an operand: one is
	 * {@code null} and the other is a number or {@code null} too. The inserts of SpEL's
	 * error are the operator and the operands' type names, {@code "null"} for a null
	 * operand; a unary {@code -} or {@code +} on a value that is not a number gives the
	 * same inserts as a binary operator with a null right operand, so a value of any
	 * other type than a number next to {@code null} is the expression's fault, as is an
	 * operator between two values of types it does not support.
	 * @param inserts the inserts of the error
	 * @return whether a number, or nothing, met a missing value
	 */
	private static boolean nullOperand(Object[] inserts) {
		if (inserts.length != 3) {
			return false;
		}
		Object left = inserts[1];
		Object right = inserts[2];
		if ("null".equals(left)) {
			return "null".equals(right) || isNumberType(right);
		}
		return "null".equals(right) && isNumberType(left);
	}

	private static boolean isNumberType(@Nullable Object typeName) {
		if (!(typeName instanceof String name)) {
			return false;
		}
		try {
			return Number.class.isAssignableFrom(ClassUtils.forName(name, ClassUtils.getDefaultClassLoader()));
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

	/**
	 * Returns whether an exception was thrown by JDK code that the expression called
	 * itself: the frame that threw it is JDK code, and so is every frame below it down to
	 * SpEL, so that no code of the application ran in between.
	 * @param thrown the exception, unwrapped
	 * @return whether it comes from the JDK
	 */
	private static boolean thrownByTheJdkForTheExpression(Throwable thrown) {
		StackTraceElement[] frames = thrown.getStackTrace();
		if (frames.length == 0 || !isJdk(frames[0])) {
			return false;
		}
		for (StackTraceElement frame : frames) {
			if (!isJdk(frame)) {
				return frame.getClassName().startsWith(SPEL_PACKAGE);
			}
		}
		return false;
	}

	private static boolean isJdk(StackTraceElement frame) {
		// java.lang.reflect.Method.invoke and the jdk.internal frames of reflection sit
		// between SpEL and the method
		return isJdk(frame.getClassName());
	}

	private static boolean isJdk(String className) {
		return className.startsWith("java.") || className.startsWith("jdk.");
	}

	/**
	 * Returns why a method of the JDK or of the request, called by the expression, failed
	 * when the failure is the value it was given: a {@link NullPointerException} for a
	 * missing value, an {@link IllegalArgumentException} (such as a
	 * {@link NumberFormatException}), an {@link IndexOutOfBoundsException}, an
	 * {@link ArithmeticException} or a {@link DateTimeException} for a malformed one.
	 * @param thrown what the method threw
	 * @return the reason in fixed words, or {@code null} for any other failure
	 */
	static @Nullable String valueRejected(Throwable thrown) {
		if (thrown instanceof NullPointerException) {
			return MISSING_VALUE;
		}
		if (thrown instanceof IllegalArgumentException || thrown instanceof IndexOutOfBoundsException
				|| thrown instanceof ArithmeticException || thrown instanceof DateTimeException) {
			return MALFORMED_VALUE;
		}
		return null;
	}

	/**
	 * Resolves the methods that an expression calls as SpEL does, and marks the failure
	 * of a method of the JDK or of the request (a type that {@code #request} is an
	 * instance of) that rejects the value it was given as the call's: the method is known
	 * here, so this does not depend on a stack trace, which HotSpot leaves out of a hot
	 * implicit exception ({@code OmitStackTraceInFastThrow}). Methods of the
	 * application's beans are left alone.
	 */
	static final class CallMethodResolver implements MethodResolver {

		private final ReflectiveMethodResolver delegate = new ReflectiveMethodResolver();

		@Override
		public @Nullable MethodExecutor resolve(EvaluationContext context, Object targetObject, String name,
				List<TypeDescriptor> argumentTypes) throws AccessException {
			MethodExecutor executor = this.delegate.resolve(context, targetObject, name, argumentTypes);
			if (executor instanceof ReflectiveMethodExecutor reflective
					&& readsTheCall(reflective.getMethod(), context.lookupVariable("request"))) {
				return (evaluationContext, target, arguments) -> {
					try {
						return reflective.execute(evaluationContext, target, arguments);
					}
					catch (AccessException ex) {
						Throwable thrown = (ex.getCause() instanceof InvocationTargetException invocation)
								? invocation.getTargetException() : null;
						String reason = (thrown != null) ? valueRejected(thrown) : null;
						if (reason != null) {
							throw new CallValueRejected(reason, thrown);
						}
						throw ex;
					}
				};
			}
			return executor;
		}

		private static boolean readsTheCall(Method method, @Nullable Object request) {
			Class<?> type = method.getDeclaringClass();
			return isJdk(type.getName()) || type.isInstance(request);
		}

	}

	/**
	 * A method of the JDK or of the request rejected the value the expression gave it;
	 * carries what it threw.
	 */
	static final class CallValueRejected extends RuntimeException {

		private static final long serialVersionUID = 1L;

		private final String reason;

		CallValueRejected(String reason, Throwable thrown) {
			super(reason, thrown, false, false);
			this.reason = reason;
		}

	}

	/**
	 * Returns the variables that the expression reads ({@code #name}) and that no call of
	 * a method has: neither one of the given parameter names nor {@code #request},
	 * {@code #principal} or {@code #args} ({@link RateLimitContext}) nor SpEL's own
	 * {@code #this} and {@code #root}. Reported when the application starts, they would
	 * otherwise read {@code null} on every call.
	 * @param parameters the names of the method's parameters
	 * @return the unknown names, without {@code #}, in the order they first appear
	 */
	public Set<String> unknownVariables(Collection<String> parameters) {
		Set<String> names = readVariables();
		names.removeAll(REQUEST_VARIABLES);
		names.remove("args");
		names.removeAll(parameters);
		return names;
	}

	/**
	 * Returns the variables that the expression reads ({@code #name}) and that a request
	 * decided by the filter does not have: any but {@code #request}, {@code #principal},
	 * {@code #this} and {@code #root}. A filter's request has no method arguments, so not
	 * {@code #args} either: it is empty there.
	 * @return the unknown names, without {@code #}, in the order they first appear
	 */
	public Set<String> unknownRequestVariables() {
		Set<String> names = readVariables();
		names.removeAll(REQUEST_VARIABLES);
		return names;
	}

	/**
	 * Returns whether the expression reads a variable.
	 * @param name the variable's name, without {@code #}
	 * @return whether it reads {@code #name}
	 */
	public boolean readsVariable(String name) {
		return readVariables().contains(name);
	}

	private Set<String> readVariables() {
		Set<String> names = new LinkedHashSet<>();
		if (this.expression instanceof SpelExpression spel) {
			collectVariables(spel.getAST(), names);
		}
		return names;
	}

	private static void collectVariables(SpelNode node, Set<String> names) {
		if (node instanceof VariableReference) {
			// written #name
			names.add(node.toStringAST().substring(1));
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			collectVariables(node.getChild(i), names);
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
