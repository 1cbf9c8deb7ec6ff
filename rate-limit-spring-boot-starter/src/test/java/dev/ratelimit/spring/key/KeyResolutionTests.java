package dev.ratelimit.spring.key;

import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.TierResolver;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The built-in key strategies and tier resolvers.
 */
class KeyResolutionTests {

	private final ClientAddressResolver addresses = new ClientAddressResolver(
			List.of(IpAddressRange.parse("10.0.0.0/8"), IpAddressRange.parse("fd00::/8")));

	private final StaticListableBeanFactory beans = new StaticListableBeanFactory();

	private final KeyResolverFactory factory = new KeyResolverFactory(this.addresses, "X-API-Key", this.beans);

	@AfterEach
	void clearSecurityContext() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void takesTheRightMostUntrustedHopBehindTrustedProxies() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader("X-Forwarded-For", "198.51.100.1, 203.0.113.9, 10.0.0.7");
		assertThat(this.addresses.clientAddress(new ServletRateLimitRequest(request))).isEqualTo("203.0.113.9");
	}

	@Test
	void ignoresForwardingHeadersFromAnUntrustedPeer() {
		MockHttpServletRequest request = request("192.0.2.4");
		request.addHeader("X-Forwarded-For", "203.0.113.9");
		request.addHeader("Forwarded", "for=203.0.113.10");
		assertThat(this.addresses.clientAddress(new ServletRateLimitRequest(request))).isEqualTo("192.0.2.4");
	}

	@Test
	void keysIpv6ClientsByTheirNetworkWhenAPrefixLengthIsSet() {
		ClientAddressResolver byNetwork = new ClientAddressResolver(List.of(IpAddressRange.parse("fd00::/8")),
				ForwardedHeader.X_FORWARDED_FOR, 64);
		RateLimitContext first = RateLimitContext.forRequest(new ServletRateLimitRequest(request("2001:db8:1:2::17")),
				null);
		RateLimitContext sameNetwork = RateLimitContext
			.forRequest(new ServletRateLimitRequest(request("2001:db8:1:2:ffff:ee::1")), null);
		RateLimitContext nextNetwork = RateLimitContext
			.forRequest(new ServletRateLimitRequest(request("2001:db8:1:3::17")), null);
		assertThat(byNetwork.resolveKey(first)).isEqualTo("ip:2001:db8:1:2:0:0:0:0/64")
			.isEqualTo(byNetwork.resolveKey(sameNetwork));
		assertThat(byNetwork.resolveKey(nextNetwork)).isEqualTo("ip:2001:db8:1:3:0:0:0:0/64");
		MockHttpServletRequest proxied = request("fd00::1");
		proxied.addHeader("X-Forwarded-For", "2001:db8:1:2::99");
		assertThat(byNetwork.resolveKey(RateLimitContext.forRequest(new ServletRateLimitRequest(proxied), null)))
			.isEqualTo("ip:2001:db8:1:2:0:0:0:0/64");
		assertThat(byNetwork.clientAddress(new ServletRateLimitRequest(proxied))).isEqualTo("2001:db8:1:2:0:0:0:99");
		assertThat(byNetwork
			.resolveKey(RateLimitContext.forRequest(new ServletRateLimitRequest(request("192.0.2.7")), null)))
			.isEqualTo("ip:192.0.2.7");
		assertThat(byNetwork.storedKey("2001:db8:1:2::5")).isEqualTo("ip:2001:db8:1:2:0:0:0:0/64");
		assertThat(byNetwork.storedKey("ip:2001:db8:1:2:0:0:0:0/64")).isEqualTo("ip:2001:db8:1:2:0:0:0:0/64");
		assertThat(new ClientAddressResolver(List.of(), ForwardedHeader.X_FORWARDED_FOR, 56)
			.storedKey("2001:db8:1:2ff::5")).isEqualTo("ip:2001:db8:1:200:0:0:0:0/56");
		assertThat(this.addresses.resolveKey(first)).isEqualTo("ip:2001:db8:1:2:0:0:0:17");
		assertThat(byNetwork.storedKey("fe80::1:2%eth0")).isEqualTo("ip:fe80:0:0:0:0:0:0:0/64");
		assertThat(byNetwork.storedKey("::ffff:192.0.2.1")).isEqualTo("ip:192.0.2.1");
		assertThatIllegalArgumentException().isThrownBy(() -> byNetwork.storedKey("ip:2001:db8::/48"))
			.withMessageContaining("does not name a /64 network");
		assertThatIllegalArgumentException().isThrownBy(() -> byNetwork.storedKey("2001:db8::/abc"))
			.withMessageContaining("ratelimit.client.ipv6-prefix-length");
	}

	@Test
	void refusesAnIpv6PrefixLengthOutsideOneTo128() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ClientAddressResolver(List.of(), ForwardedHeader.X_FORWARDED_FOR, 0))
			.withMessageContaining("from 1 to 128, but is 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ClientAddressResolver(List.of(), ForwardedHeader.X_FORWARDED_FOR, 129))
			.withMessageContaining("from 1 to 128, but is 129");
	}

	@Test
	void readsQuotedIpv6ForwardedNodesWithPortsWhenTheProxiesWriteForwarded() {
		ClientAddressResolver forwarded = new ClientAddressResolver(
				List.of(IpAddressRange.parse("10.0.0.0/8"), IpAddressRange.parse("fd00::/8")),
				ForwardedHeader.FORWARDED);
		MockHttpServletRequest request = request("fd00::1");
		request.addHeader("Forwarded", "For=\"[2001:db8:cafe::17]:4711\";proto=https");
		request.addHeader("X-Forwarded-For", "198.51.100.66");
		assertThat(forwarded.clientAddress(new ServletRateLimitRequest(request))).isEqualTo("2001:db8:cafe:0:0:0:0:17");
	}

	@Test
	void ignoresAForwardedHeaderThatTheProxiesDoNotWrite() {
		// The proxy appends X-Forwarded-For and passes a client's own Forwarded header
		// through untouched.
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader("Forwarded", "for=198.51.100.77");
		request.addHeader("X-Forwarded-For", "203.0.113.9");
		assertThat(this.addresses.clientAddress(new ServletRateLimitRequest(request))).isEqualTo("203.0.113.9");
	}

	@Test
	void aHeaderValueCannotNameAnotherCallersAddressKey() {
		MockHttpServletRequest request = request("192.0.2.4");
		request.addHeader("X-Tenant", "ip:203.0.113.7");
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(request), null);
		assertThat(this.factory.create("header:X-Tenant").resolveKey(context)).isEqualTo("header:ip:203.0.113.7");
	}

	@Test
	void fallsBackToTheLeftMostHopWhenEveryHopIsTrusted() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader("X-Forwarded-For", "10.1.1.1, 10.2.2.2");
		assertThat(this.addresses.clientAddress(new ServletRateLimitRequest(request))).isEqualTo("10.1.1.1");
	}

	@Test
	void parsesCidrBlocksWithoutNameLookups() {
		IpAddressRange range = IpAddressRange.parse("192.168.0.0/16");
		assertThat(range.contains(IpAddressRange.parseAddress("192.168.44.1"))).isTrue();
		assertThat(range.contains(IpAddressRange.parseAddress("192.169.0.1"))).isFalse();
		assertThat(range.contains(IpAddressRange.parseAddress("::1"))).isFalse();
		assertThat(IpAddressRange.parseAddress("localhost")).isNull();
		assertThat(IpAddressRange.parseAddress("256.1.1.1")).isNull();
		// a text with a colon that does not start like an IPv6 literal is refused, never
		// looked up as a host name
		assertThat(IpAddressRange.parseAddress(".1:2")).isNull();
		assertThat(IpAddressRange.parseAddress("..:")).isNull();
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("10.0.0.0/40"));
	}

	@Test
	void hashesApiKeysWithSha256() {
		MockHttpServletRequest request = request("192.0.2.1");
		request.addHeader("X-API-Key", "abc");
		assertThat(this.factory.create("api-key")
			.resolveKey(RateLimitContext.forRequest(new ServletRateLimitRequest(request), null)))
			.isEqualTo("key:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	}

	@Test
	void fallsBackToTheAddressWithoutAnApiKeyOrAPrincipalOrAHeader() {
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(request("192.0.2.1")), null);
		assertThat(this.factory.create("api-key").resolveKey(context)).isEqualTo("ip:192.0.2.1");
		assertThat(this.factory.create("principal").resolveKey(context)).isEqualTo("ip:192.0.2.1");
		assertThat(this.factory.create("header:X-Tenant").resolveKey(context)).isEqualTo("ip:192.0.2.1");
	}

	@Test
	void keysByTheAuthenticatedPrincipal() {
		SecurityContextHolder.getContext()
			.setAuthentication(new TestingAuthenticationToken("alice", "n/a", "ROLE_USER"));
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(request("192.0.2.1")), null);
		assertThat(this.factory.create("principal").resolveKey(context)).isEqualTo("user:alice");
	}

	@Test
	void sharesOneGlobalKeyAndReadsHeadersAndBeans() {
		MockHttpServletRequest request = request("192.0.2.1");
		request.addHeader("X-Tenant", "acme");
		this.beans.addBean("tenantKeys",
				(KeyResolver) (context) -> "tenant:" + context.request().getHeader("X-Tenant"));
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(request), this.beans);
		assertThat(this.factory.create("global").resolveKey(context)).isEqualTo("global");
		assertThat(this.factory.create("header:X-Tenant").resolveKey(context)).isEqualTo("header:acme");
		assertThat(this.factory.create("bean:tenantKeys").resolveKey(context)).isEqualTo("tenant:acme");
		assertThat(this.factory.create("#{#request.getHeader('X-Tenant').toUpperCase()}").resolveKey(context))
			.isEqualTo("expr:ACME");
	}

	@Test
	void rejectsABeanThatIsNotAKeyResolver() {
		this.beans.addBean("notAResolver", "text");
		assertThatIllegalArgumentException().isThrownBy(() -> this.factory.create("bean:notAResolver"))
			.withMessageContaining("which is not a dev.ratelimit.spring.KeyResolver");
	}

	@Test
	void readsTheTierFromATierAuthorityInAnyCase() {
		SecurityContextHolder.getContext()
			.setAuthentication(new TestingAuthenticationToken("bob", "n/a", "ROLE_USER", "tier_PAID"));
		assertThat(new AuthorityTierResolver()
			.resolveTier(RateLimitContext.forRequest(new ServletRateLimitRequest(request("192.0.2.1")), null)))
			.isEqualTo("paid");
	}

	@Test
	void readsOnlyAuthoritiesThatStartWithTheTierPrefix() {
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(request("192.0.2.1")), null);
		SecurityContextHolder.getContext()
			.setAuthentication(new TestingAuthenticationToken("ann", "n/a", "tier_", "ROLE_TIER_GOLD", "tie_gold",
					"tier-gold", "TiEr_Gold", "TIER_SILVER"));
		assertThat(new AuthorityTierResolver().resolveTier(context)).isEqualTo("gold");
		SecurityContextHolder.getContext()
			.setAuthentication(new TestingAuthenticationToken("ann", "n/a", "tier_", "ROLE_TIER_GOLD", "tie_gold"));
		assertThat(new AuthorityTierResolver().resolveTier(context)).isNull();
	}

	@Test
	void readsTheTierFromTheRequestAttributeWithoutATierAuthority() {
		MockHttpServletRequest request = request("192.0.2.1");
		request.setAttribute(TierResolver.TIER_ATTRIBUTE, "partner");
		RateLimitContext context = RateLimitContext.forRequest(new ServletRateLimitRequest(request), null);
		assertThat(new AuthorityTierResolver().resolveTier(context)).isEqualTo("partner");
		assertThat(new RequestAttributeTierResolver().resolveTier(context)).isEqualTo("partner");
		assertThat(new RequestAttributeTierResolver()
			.resolveTier(RateLimitContext.forRequest(new ServletRateLimitRequest(request("192.0.2.1")), null)))
			.isNull();
	}

	private static MockHttpServletRequest request(String peer) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/x");
		request.setRemoteAddr(peer);
		return request;
	}

}
