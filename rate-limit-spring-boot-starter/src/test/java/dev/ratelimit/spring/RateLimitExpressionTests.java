package dev.ratelimit.spring;

import java.lang.reflect.Method;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Whose fault a failing expression is does not depend on the stack trace of what it threw: HotSpot throws a hot
 * implicit exception without one ({@code OmitStackTraceInFastThrow}, on by default), and methods of the request are
 * the request's, whichever class implements them.
 */
class RateLimitExpressionTests {

	private final RateLimitContext call = RateLimitContext.forRequest(new MockHttpServletRequest(), null);

	@Test
	void aJdkMethodRejectingAMissingValueIsTheRequestsFaultEvenOnceHotSpotThrowsItWithoutAStackTrace() {
		RateLimitExpression expression = RateLimitExpression.parse("#{'v1-'.concat(#request.getHeader('X-Tenant'))}");
		// enough calls for the JIT to compile String.concat's null check into a pre-allocated exception
		for (int i = 0; i < 60_000; i++) {
			assertThatExceptionOfType(RateLimitEvaluationException.class)
				.isThrownBy(() -> expression.evaluate(this.call))
				.withMessageEndingWith("it reads a value that this request does not have");
		}
	}

	@Test
	void aRequestMethodRejectingAMalformedHeaderIsTheRequestsFault() {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader("X-Count", "abc");
		RateLimitExpression expression = RateLimitExpression.parse("#{#request.getIntHeader('X-Count')}");
		assertThatExceptionOfType(RateLimitEvaluationException.class)
			.isThrownBy(() -> expression.evaluate(RateLimitContext.forRequest(request, null)))
			.withMessageEndingWith("a value it reads from this request does not have the expected form");
	}

	@Test
	void aMissingHeaderTestedWithMatchesIsTheRequestsFault() {
		RateLimitExpression expression = RateLimitExpression
			.parse("#{#request.getHeader('X-Plan') matches 'b.*' ? 5 : 1}");
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader("X-Plan", "bulk");
		assertThat(expression.evaluate(RateLimitContext.forRequest(request, null))).isEqualTo(5);
		assertThatExceptionOfType(RateLimitEvaluationException.class).isThrownBy(() -> expression.evaluate(this.call))
			.withMessageEndingWith("it reads a value that this request does not have");
	}

	@Test
	void aMissingArgumentInArithmeticIsTheCallsFault() throws NoSuchMethodException {
		RateLimitExpression expression = RateLimitExpression.parse("#{#count + 1}");
		Method method = RateLimitExpressionTests.class.getDeclaredMethod("batch", Integer.class);
		assertThat(expression.evaluate(RateLimitContext.forInvocation(null, method, new Object[] { 4 },
				new String[] { "count" }, null)))
			.isEqualTo(5);
		assertThatExceptionOfType(RateLimitEvaluationException.class)
			.isThrownBy(() -> expression.evaluate(RateLimitContext.forInvocation(null, method, new Object[] { null },
					new String[] { "count" }, null)))
			.withMessageEndingWith("it reads a value that this request does not have");
	}

	@Test
	void anOperatorBetweenTwoValuesOfTypesItDoesNotApplyToIsTheApplicationsFault() {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader("X-Count", "12");
		// a header is text, whatever it holds: wrong for every request that has it
		RateLimitExpression expression = RateLimitExpression.parse("#{#request.getHeader('X-Count') - 1}");
		assertThatIllegalStateException()
			.isThrownBy(() -> expression.evaluate(RateLimitContext.forRequest(request, null)))
			.withMessageContaining("The operator 'SUBTRACT' is not supported");
		// SpEL reports a unary minus on text as a subtraction with a missing right operand: still not the request's
		RateLimitExpression negated = RateLimitExpression.parse("#{-#request.getHeader('X-Count')}");
		assertThatIllegalStateException().isThrownBy(() -> negated.evaluate(RateLimitContext.forRequest(request, null)))
			.withMessageContaining("The operator 'SUBTRACT' is not supported");
		assertThatExceptionOfType(RateLimitEvaluationException.class).isThrownBy(() -> negated.evaluate(this.call))
			.withMessageEndingWith("it reads a value that this request does not have");
	}

	static void batch(Integer count) {
	}

}
