package dev.ratelimit.spring.actuate;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.key.ClientAddressResolver;
import dev.ratelimit.spring.key.KeyResolverFactory;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint names a client as its policy's key strategy reads it from a call;
 * {@link KeyResolver#storedKey} must turn that into exactly the key the decision path
 * stores, or the endpoint would read and reset another client.
 */
class StoredKeyTests {

	private final KeyResolverFactory factory = new KeyResolverFactory(new ClientAddressResolver(List.of()), "X-API-Key",
			null);

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "api-key, X-API-Key, demo-free", "header:X-Client, X-Client, acme",
			"'#{#request.getHeader(''T'')}', T, t-1" })
	void namesTheClientOfAHeaderStrategyByTheHeaderValue(String strategy, String header, String value) {
		KeyResolver resolver = this.factory.create(strategy);
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader(header, value);
		assertThat(resolver.storedKey(value))
			.isEqualTo(resolver.resolveKey(RateLimitContext.forRequest(new ServletRateLimitRequest(request), null)));
	}

	@Test
	void hashesAnApiKeyAsTheDecisionPathDoes() {
		KeyResolver resolver = this.factory.create("api-key");
		// SHA-256 of "demo-free": the stored keys of every client depend on it never
		// changing.
		String expected = "key:e1f4fdb94683a17c8a5d9e6dc6cca27c4a2f827dbe26ede139c17a61127b1f4f";
		assertThat(resolver.storedKey("demo-free")).isEqualTo(expected);
		assertThat(resolver.storedKey("demo-paid")).isNotEqualTo(expected)
			.startsWith("key:")
			.hasSize(expected.length());
		assertThat(resolver.storedKey("demo-free")).isEqualTo(expected);
	}

	@Test
	void namesAnAuthenticatedClientByItsPrincipalName() {
		KeyResolver resolver = this.factory.create("principal");
		SecurityContextHolder.getContext()
			.setAuthentication(UsernamePasswordAuthenticationToken.authenticated("alice", null, List.of()));
		try {
			assertThat(resolver.storedKey("alice")).isEqualTo(resolver.resolveKey(
					RateLimitContext.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null)));
		}
		finally {
			SecurityContextHolder.clearContext();
		}
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "ip, 2001:db8:0:0:0:0:0:1, 2001:db8::1", "ip, 203.0.113.7, 203.0.113.7",
			"api-key, 203.0.113.7, ip:203.0.113.7", "principal, 203.0.113.7, ip:203.0.113.7" })
	void namesACallerKeyedByAddressByTheAddress(String strategy, String remoteAddress, String client) {
		KeyResolver resolver = this.factory.create(strategy);
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr(remoteAddress);
		assertThat(resolver.storedKey(client))
			.isEqualTo(resolver.resolveKey(RateLimitContext.forRequest(new ServletRateLimitRequest(request), null)));
	}

	@Test
	void namesTheOneClientOfAGlobalPolicyByAnyName() {
		KeyResolver resolver = this.factory.create("global");
		assertThat(resolver.storedKey("anything")).isEqualTo(KeyResolverFactory.GLOBAL_KEY)
			.isEqualTo(resolver.resolveKey(
					RateLimitContext.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null)));
	}

}
