package dev.ratelimit.spring.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.authentication.TestingAuthenticationToken;

import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitExpression;
import dev.ratelimit.spring.RateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The servlet request as the decision path reads it.
 */
class ServletRateLimitRequestTests {

	@Test
	void readsTheMethodThePathWithinTheApplicationAndThePeer() {
		MockHttpServletRequest servlet = new MockHttpServletRequest("POST", "/shop/api/orders");
		servlet.setContextPath("/shop");
		servlet.setQueryString("page=2");
		servlet.setRemoteAddr("192.0.2.7");
		RateLimitRequest request = new ServletRateLimitRequest(servlet);
		assertThat(request.getMethod()).isEqualTo("POST");
		assertThat(request.getPath()).isEqualTo("/api/orders");
		assertThat(request.getRemoteAddr()).isEqualTo("192.0.2.7");
	}

	@Test
	void readsTheFirstValueOfAHeaderOrEveryLine() {
		MockHttpServletRequest servlet = new MockHttpServletRequest();
		servlet.addHeader("X-Forwarded-For", "198.51.100.1, 203.0.113.9");
		servlet.addHeader("X-Forwarded-For", "10.0.0.7");
		RateLimitRequest request = new ServletRateLimitRequest(servlet);
		assertThat(request.getHeader("x-forwarded-for")).isEqualTo("198.51.100.1, 203.0.113.9");
		assertThat(request.getHeaderValues("X-Forwarded-For")).containsExactly("198.51.100.1, 203.0.113.9", "10.0.0.7");
		assertThat(request.getHeader("X-API-Key")).isNull();
		assertThat(request.getHeaderValues("X-API-Key")).isEmpty();
	}

	@Test
	void readsThePrincipalAndSetsAndRemovesAttributesOfTheServletRequest() {
		MockHttpServletRequest servlet = new MockHttpServletRequest();
		TestingAuthenticationToken alice = new TestingAuthenticationToken("alice", "secret");
		servlet.setUserPrincipal(alice);
		RateLimitRequest request = new ServletRateLimitRequest(servlet);
		assertThat(request.getUserPrincipal()).isSameAs(alice);
		request.setAttribute("tier", "paid");
		assertThat(servlet.getAttribute("tier")).isEqualTo("paid");
		assertThat(request.getAttribute("tier")).isEqualTo("paid");
		request.setAttribute("tier", null);
		assertThat(servlet.getAttribute("tier")).isNull();
	}

	@Test
	void expressionsReadTheServletRequestAsRequest() {
		MockHttpServletRequest servlet = new MockHttpServletRequest();
		servlet.addParameter("username", "alice");
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(servlet), null);
		assertThat(RateLimitExpression.parse("#{#request}").evaluate(context)).isSameAs(servlet);
		assertThat(RateLimitExpression.parse("#{#request.getParameter('username')}").evaluate(context))
			.isEqualTo("alice");
	}

	@Test
	void theReceivedRequestLiesBeneathEveryWrapper() {
		MockHttpServletRequest servlet = new MockHttpServletRequest();
		servlet.setRemoteAddr("10.0.0.1");
		servlet.addHeader("X-Forwarded-For", "203.0.113.9");
		HttpServletRequest forwarded = new HttpServletRequestWrapper(new HttpServletRequestWrapper(servlet) {

			@Override
			public String getRemoteAddr() {
				return "203.0.113.9";
			}

			@Override
			public String getHeader(String name) {
				return null;
			}

		});
		RateLimitRequest request = new ServletRateLimitRequest(forwarded);
		assertThat(request.getRemoteAddr()).isEqualTo("203.0.113.9");
		assertThat(request.getNativeRequest()).isSameAs(forwarded);
		RateLimitRequest received = request.getReceivedRequest();
		assertThat(received.getRemoteAddr()).isEqualTo("10.0.0.1");
		assertThat(received.getHeader("X-Forwarded-For")).isEqualTo("203.0.113.9");
		assertThat(received.getNativeRequest()).isSameAs(servlet);
		RateLimitRequest unwrapped = new ServletRateLimitRequest(servlet);
		assertThat(unwrapped.getReceivedRequest()).isSameAs(unwrapped);
	}

}
