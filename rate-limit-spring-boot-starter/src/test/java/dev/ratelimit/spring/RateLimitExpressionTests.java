package dev.ratelimit.spring;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

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

}
