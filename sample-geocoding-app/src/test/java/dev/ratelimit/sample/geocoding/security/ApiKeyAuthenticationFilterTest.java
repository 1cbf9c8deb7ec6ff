package dev.ratelimit.sample.geocoding.security;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;

import dev.ratelimit.core.Limit;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The API-key filter on its own: which header it reads, what counts as no key, and the
 * start-up check of the tiers.
 */
class ApiKeyAuthenticationFilterTest {

	private final ApiKeyProperties properties = new ApiKeyProperties();

	ApiKeyAuthenticationFilterTest() {
		ApiKeyProperties.Client paid = new ApiKeyProperties.Client();
		paid.setName("acme");
		paid.setTier("paid");
		this.properties.getApiKeys().put("acme-key", paid);
	}

	@AfterEach
	void clearContext() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void readsTheKeyFromTheHeaderTheRateLimiterKeysCallersBy() throws Exception {
		MockHttpServletRequest request = request("Api-Key", "acme-key");
		MockFilterChain chain = new MockFilterChain();
		filter("Api-Key").doFilter(request, new MockHttpServletResponse(), chain);
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		assertThat(authentication).isNotNull();
		assertThat(authentication.getName()).isEqualTo("acme");
		assertThat(authentication.getAuthorities()).extracting(GrantedAuthority::getAuthority).contains("TIER_PAID");
		assertThat(chain.getRequest()).isSameAs(request);
	}

	@Test
	void answersAnUnknownKeyInThatHeaderWith401NamingIt() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		filter("Api-Key").doFilter(request("Api-Key", "guessed"), response, chain);
		assertThat(response.getStatus()).isEqualTo(401);
		assertThat(response.getHeader("WWW-Authenticate")).isEqualTo("ApiKey header=\"Api-Key\"");
		assertThat(response.getContentAsString()).contains("The API key in the Api-Key header is not known");
		assertThat(chain.getRequest()).isNull();
	}

	@Test
	void leavesACallerWithABlankKeyAnonymousAsTheRateLimiterDoes() throws Exception {
		ApiKeyAuthenticationFilter filter = filter("X-API-Key");
		for (String blank : List.of("", "  ")) {
			MockHttpServletRequest request = request("X-API-Key", blank);
			MockHttpServletResponse response = new MockHttpServletResponse();
			MockFilterChain chain = new MockFilterChain();
			filter.doFilter(request, response, chain);
			assertThat(response.getStatus()).as("'%s'", blank).isEqualTo(200);
			assertThat(chain.getRequest()).as("'%s'", blank).isSameAs(request);
			assertThat(SecurityContextHolder.getContext().getAuthentication()).as("'%s'", blank).isNull();
		}
	}

	@Test
	void startUpFailsForAKeyWhoseTierNoPolicyDefines() {
		ApiKeyProperties.Client gold = new ApiKeyProperties.Client();
		gold.setName("goldie");
		gold.setTier("gold");
		this.properties.getApiKeys().put("gold-key", gold);
		assertThatIllegalStateException().isThrownBy(() -> this.properties.checkTiers(policies()))
			.withMessage("geocoding.api-keys: client goldie has tier 'gold', which no rate-limit policy defines "
					+ "(known tiers: anonymous, free, paid); its callers would get the limits of the default tier "
					+ "'anonymous'")
			.withMessageNotContaining("gold-key");
	}

	@Test
	void acceptsKnownTiersWhateverTheirCase() {
		ApiKeyProperties.Client shouting = new ApiKeyProperties.Client();
		shouting.setTier("FREE");
		this.properties.getApiKeys().put("free-key", shouting);
		assertThatNoException().isThrownBy(() -> this.properties.checkTiers(policies()));
	}

	private ApiKeyAuthenticationFilter filter(String header) {
		return new ApiKeyAuthenticationFilter(this.properties, new JsonMapper(), header);
	}

	private static MockHttpServletRequest request(String header, String apiKey) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/geocode");
		request.addHeader(header, apiKey);
		return request;
	}

	private static PolicyRegistry policies() {
		return new PolicyRegistry(
				List.of(new Policy("api", "api-key", (context) -> "key", false, List.of(), Map.of("free",
						List.of(Limit.fixedWindow("60/1m")), "paid", List.of(Limit.fixedWindow("1000/1m"))))),
				"anonymous");
	}

}
