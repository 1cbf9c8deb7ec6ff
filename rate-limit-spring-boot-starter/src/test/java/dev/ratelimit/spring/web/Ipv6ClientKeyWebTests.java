package dev.ratelimit.spring.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;

/**
 * An IPv6 host holds a whole /64 and can send each request from another address of it. By
 * default its addresses are one client: against a 2 per minute policy keyed by address,
 * six addresses of one /64 get two 200s, then 429s, whether they come as the direct peer
 * or behind a trusted proxy (10.0.0.0/8 in the {@code mvc} profile), and so do the
 * anonymous callers of {@code principal} and {@code api-key} policies, which fall back to
 * the address. {@code ratelimit.client.ipv6-prefix-length: 128} keys each address on its
 * own.
 */
@SpringBootTest(classes = { WebTestApplication.class, Ipv6ClientKeyWebTests.AnonymousController.class })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
@TestPropertySource(properties = { "ratelimit.policies.per-user.key=principal",
		"ratelimit.policies.per-user.limits[0].algorithm=fixed-window",
		"ratelimit.policies.per-user.limits[0].rate=2/1m", "ratelimit.policies.per-api-key.key=api-key",
		"ratelimit.policies.per-api-key.limits[0].algorithm=fixed-window",
		"ratelimit.policies.per-api-key.limits[0].rate=2/1m" })
class Ipv6ClientKeyWebTests {

	private static final List<String> TWO_ALLOWED_THEN_REJECTED = List.of("200", "200", "429", "429", "429", "429");

	private static final List<String> ALL_ALLOWED = List.of("200", "200", "200", "200", "200", "200");

	/** The client is the peer: no proxy. */
	private static final RequestFrom AS_THE_PEER = (client, request) -> request.with((servletRequest) -> {
		servletRequest.setRemoteAddr(client);
		return servletRequest;
	});

	/** The client comes through a trusted proxy, which appends it to X-Forwarded-For. */
	private static final RequestFrom FROM_A_TRUSTED_PROXY = (client, request) -> request.with((servletRequest) -> {
		servletRequest.setRemoteAddr("10.0.0.1");
		return servletRequest;
	}).header("X-Forwarded-For", client);

	@Autowired
	private MockMvc mvc;

	@Autowired
	private MutableTimeSource clock;

	@BeforeEach
	void nextWindow() {
		this.clock.advance(Duration.ofHours(1));
	}

	@Test
	void keysTheAddressesOfOneSlash64AsOneClientBehindATrustedProxy() throws Exception {
		assertThat(statuses("/api/ip", FROM_A_TRUSTED_PROXY, sixAddressesOf("2001:db8:1:1")))
			.isEqualTo(TWO_ALLOWED_THEN_REJECTED);
	}

	@Test
	void keysTheAddressesOfOneSlash64AsOneClientAsTheDirectPeer() throws Exception {
		assertThat(statuses("/api/ip", AS_THE_PEER, sixAddressesOf("2001:db8:1:2")))
			.isEqualTo(TWO_ALLOWED_THEN_REJECTED);
	}

	@Test
	void keysAnonymousCallersOfPrincipalAndApiKeyPoliciesByTheirSlash64() throws Exception {
		assertThat(statuses("/api/anonymous/per-user", FROM_A_TRUSTED_PROXY, sixAddressesOf("2001:db8:1:3")))
			.isEqualTo(TWO_ALLOWED_THEN_REJECTED);
		assertThat(statuses("/api/anonymous/per-api-key", AS_THE_PEER, sixAddressesOf("2001:db8:1:4")))
			.isEqualTo(TWO_ALLOWED_THEN_REJECTED);
	}

	@Test
	void keysAnotherSlash64AsAnotherClient() throws Exception {
		assertThat(statuses("/api/ip", AS_THE_PEER, sixAddressesOf("2001:db8:1:5")))
			.isEqualTo(TWO_ALLOWED_THEN_REJECTED);
		assertThat(statuses("/api/ip", AS_THE_PEER, "2001:db8:1:6::1", "2001:db8:1:6::2")).containsExactly("200",
				"200");
	}

	@Test
	void keysAnIpv4MappedAddressAsTheIpv4Address() throws Exception {
		// as IPv6, all of ::ffff:0:0/96 would lie in ::/64, one client for every IPv4
		// caller
		assertThat(statuses("/api/ip", AS_THE_PEER, "::ffff:203.0.113.7", "203.0.113.7", "::ffff:203.0.113.7"))
			.containsExactly("200", "200", "429");
		assertThat(statuses("/api/ip", FROM_A_TRUSTED_PROXY, "::ffff:203.0.113.8", "::ffff:203.0.113.9",
				"::ffff:203.0.113.10"))
			.containsExactly("200", "200", "200");
	}

	@Nested
	@TestPropertySource(properties = "ratelimit.client.ipv6-prefix-length=128")
	class EachAddressOnItsOwn {

		@Test
		void keysEachAddressOfASlash64AsItsOwnClient() throws Exception {
			assertThat(statuses("/api/ip", FROM_A_TRUSTED_PROXY, sixAddressesOf("2001:db8:2:1")))
				.isEqualTo(ALL_ALLOWED);
			assertThat(statuses("/api/ip", AS_THE_PEER, sixAddressesOf("2001:db8:2:2"))).isEqualTo(ALL_ALLOWED);
			assertThat(statuses("/api/anonymous/per-api-key", AS_THE_PEER, sixAddressesOf("2001:db8:2:3")))
				.isEqualTo(ALL_ALLOWED);
		}

	}

	/**
	 * Six addresses of a /64 as a host would pick them: each with other interface bits.
	 */
	private static String[] sixAddressesOf(String network) {
		return new String[] { network + "::1", network + ":a8bb:ccff:fe00:1", network + ":1234:5678:9abc:def0",
				network + ":ffff:ffff:ffff:fffe", network + "::2:0", network + ":8000::42" };
	}

	private List<String> statuses(String path, RequestFrom from, String... addresses) throws Exception {
		List<String> statuses = new ArrayList<>();
		for (String address : addresses) {
			statuses.add(Integer
				.toString(this.mvc.perform(from.request(address, get(path))).andReturn().getResponse().getStatus()));
		}
		return statuses;
	}

	/** How a client's request reaches the application. */
	@FunctionalInterface
	private interface RequestFrom {

		MockHttpServletRequestBuilder request(String client, MockHttpServletRequestBuilder request);

	}

	@RestController
	static class AnonymousController {

		@GetMapping("/api/anonymous/per-user")
		@RateLimited("per-user")
		String perUser() {
			return "ok";
		}

		@GetMapping("/api/anonymous/per-api-key")
		@RateLimited("per-api-key")
		String perApiKey() {
			return "ok";
		}

	}

}
