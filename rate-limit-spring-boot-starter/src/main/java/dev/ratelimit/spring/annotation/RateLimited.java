package dev.ratelimit.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits calls of a method, or of every public method of a class, by a named policy of
 * {@code ratelimit.policies}, such as {@code @RateLimited(policy = "batch", cost =
 * "#{#queries.size()}")}, possibly only when a condition holds ({@link #when()}).
 * Repeatable: several are decided together. A rejected call throws
 * {@code RateLimitExceededException}, answered 429 in a web application. Expressions and
 * policy names are checked at start-up. Usable as a meta-annotation.
 */
@Target({ ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

	/**
	 * The policy name; the same as {@link #policy()}.
	 * @return the policy name
	 */
	String value() default "";

	/**
	 * The policy name; the same as {@link #value()}.
	 * @return the policy name
	 */
	String policy() default "";

	/**
	 * The key that replaces the policy's key for this method: SpEL {@code #{...}} over
	 * the method arguments by name, {@code #request}, {@code #principal} and
	 * {@code @beans}, or any key strategy such as {@code ip}. Empty: the policy's key. An
	 * expression that fails on a value of a call to a web request's handler method (a
	 * {@code null} argument, say) throws
	 * {@link dev.ratelimit.spring.RateLimitEvaluationException} before anything is
	 * charged, answered 400; for any other method, whose arguments come from the
	 * application, an {@link IllegalStateException}. A shadow policy is not decided for
	 * that call instead.
	 * @return the key
	 */
	String key() default "";

	/**
	 * The permits a call takes: a whole number, or SpEL {@code #{...}} such as
	 * {@code #{#queries.size()}}. An expression that gives {@code null}, a negative
	 * number or text that is not a whole number for a call, or fails on a value of the
	 * call, fails as {@link #key()} says; one that gives neither a number nor text (a
	 * collection, say) is an {@link IllegalStateException}.
	 * @return the cost
	 */
	String cost() default "1";

	/**
	 * The condition under which this annotation applies to a call: SpEL {@code #{...}}
	 * over the same variables as {@link #key()} that gives {@code true} or {@code false}
	 * (or that text), such as {@code #{#userId != 'admin'}}, or {@code true} or
	 * {@code false}. Empty: every call. A call for which it is false spends nothing from
	 * this annotation's policy and gets no headers for it; the method's other annotations
	 * and the filter rules of its request still apply. An expression that gives
	 * {@code null} or anything else, or fails on a value of the call, fails as
	 * {@link #key()} says.
	 * @return the condition
	 */
	String when() default "";

	/**
	 * Holds repeated {@link RateLimited} annotations.
	 */
	@Target({ ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface List {

		/**
		 * The annotations.
		 * @return the annotations
		 */
		RateLimited[] value();

	}

}
