package dev.ratelimit.spring;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Whose fault a failing expression is does not depend on the stack trace of what it
 * threw: HotSpot throws a hot implicit exception without one
 * ({@code OmitStackTraceInFastThrow}, on by default), and methods of the request are the
 * request's, whichever class implements them.
 */
class RateLimitExpressionTests {

	private final RateLimitContext call = RateLimitContext
		.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null);

	@Test
	void aJdkMethodRejectingAMissingValueIsTheRequestsFaultEvenOnceHotSpotThrowsItWithoutAStackTrace() {
		RateLimitExpression expression = RateLimitExpression.parse("#{'v1-'.concat(#request.getHeader('X-Tenant'))}");
		// enough calls for the JIT to compile String.concat's null check into a
		// pre-allocated exception
		for (int i = 0; i < 60_000; i++) {
			assertThatExceptionOfType(RateLimitEvaluationException.class)
				.isThrownBy(() -> expression.evaluate(this.call))
				.withMessageEndingWith("it reads a value that this request does not have");
		}
	}

	@Test
	void aRequestMethodRejectingAMalformedHeaderIsTheRequestsFault() {
		RateLimitExpression expression = RateLimitExpression.parse("#{#request.getIntHeader('X-Count')}");
		assertThatExceptionOfType(RateLimitEvaluationException.class)
			.isThrownBy(() -> expression.evaluate(withHeader("X-Count", "abc")))
			.withMessageEndingWith("a value it reads from this request does not have the expected form");
	}

	@Test
	void aMissingHeaderTestedWithMatchesIsTheRequestsFault() {
		RateLimitExpression expression = RateLimitExpression
			.parse("#{#request.getHeader('X-Plan') matches 'b.*' ? 5 : 1}");
		assertThat(expression.evaluate(withHeader("X-Plan", "bulk"))).isEqualTo(5);
		assertThatExceptionOfType(RateLimitEvaluationException.class).isThrownBy(() -> expression.evaluate(this.call))
			.withMessageEndingWith("it reads a value that this request does not have");
	}

	@Test
	void aMissingArgumentInArithmeticIsTheCallsFault() {
		RateLimitExpression expression = RateLimitExpression.parse("#{#count + 1}");
		assertThat(expression.evaluate(batch(4))).isEqualTo(5);
		assertThatExceptionOfType(RateLimitEvaluationException.class).isThrownBy(() -> expression.evaluate(batch(null)))
			.withMessageEndingWith("it reads a value that this request does not have");
	}

	@Test
	void anOperatorBetweenTwoValuesOfTypesItDoesNotApplyToIsTheApplicationsFault() {
		RateLimitContext request = withHeader("X-Count", "12");
		// a header is text, whatever it holds: wrong for every request that has it
		RateLimitExpression expression = RateLimitExpression.parse("#{#request.getHeader('X-Count') - 1}");
		assertThatIllegalStateException().isThrownBy(() -> expression.evaluate(request))
			.withMessageContaining("The operator 'SUBTRACT' is not supported");
		// SpEL reports a unary minus on text as a subtraction with a missing right
		// operand: still not the request's
		RateLimitExpression negated = RateLimitExpression.parse("#{-#request.getHeader('X-Count')}");
		assertThatIllegalStateException().isThrownBy(() -> negated.evaluate(request))
			.withMessageContaining("The operator 'SUBTRACT' is not supported");
		assertThatExceptionOfType(RateLimitEvaluationException.class).isThrownBy(() -> negated.evaluate(this.call))
			.withMessageEndingWith("it reads a value that this request does not have");
	}

	private static RateLimitContext withHeader(String name, String value) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader(name, value);
		return RateLimitContext.forRequest(new ServletRateLimitRequest(request), null);
	}

	/**
	 * Returns a call of {@link #priced(Integer)}, outside a web request.
	 */
	private static RateLimitContext batch(@Nullable Integer count) {
		try {
			Method method = RateLimitExpressionTests.class.getDeclaredMethod("priced", Integer.class);
			return RateLimitContext.forInvocation(null, method, new Object[] { count }, new String[] { "count" }, null);
		}
		catch (NoSuchMethodException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static void priced(Integer count) {
	}

}
