package dev.ratelimit.spring.docs;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.RequestPostProcessor;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.core.ManualTimeSource;

import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.jwt;
import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.oidcLogin;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The {@code tier-claim} example of docs/KEYS-AND-TIERS.md, read from the doc, over
 * MockMvc: the tier comes from the {@code plan} claim of a JWT or of an OIDC user, and a
 * {@code TIER_} authority wins over it. Each test uses its own subject.
 */
@SpringBootTest(classes = TierClaimDocsTests.TierClaimApplication.class)
@AutoConfigureMockMvc
class TierClaimDocsTests {

	private static final String FREE = "\"api\";q=2;w=60";

	private static final String PAID = "\"api\";q=5;w=60";

	@DynamicPropertySource
	static void tierClaimExample(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "docs/KEYS-AND-TIERS.md", "tier-claim");
	}

	@Autowired
	private MockMvc mvc;

	@Test
	void aJwtWhosePlanClaimIsPaidGetsThePaidTiersLimits() throws Exception {
		RequestPostProcessor paid = jwt().jwt((token) -> token.subject("jwt-paid").claim("plan", "paid"));
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/plans").with(paid))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", PAID));
		}
		this.mvc.perform(get("/api/plans").with(paid)).andExpect(status().isTooManyRequests());
	}

	@Test
	void aTierAuthorityWinsOverTheClaim() throws Exception {
		this.mvc
			.perform(get("/api/plans").with(jwt().jwt((token) -> token.subject("jwt-both").claim("plan", "paid"))
				.authorities(new SimpleGrantedAuthority("TIER_FREE"))))
			.andExpect(header().string("RateLimit-Policy", FREE));
	}

	@Test
	void aJwtWithoutTheClaimGetsTheDefaultTier() throws Exception {
		this.mvc.perform(get("/api/plans").with(jwt().jwt((token) -> token.subject("jwt-none"))))
			.andExpect(header().string("RateLimit-Policy", FREE));
	}

	@Test
	void aListClaimGivesItsFirstElement() throws Exception {
		this.mvc
			.perform(get("/api/plans")
				.with(jwt().jwt((token) -> token.subject("jwt-list").claim("plan", List.of("paid", "beta")))))
			.andExpect(header().string("RateLimit-Policy", PAID));
	}

	@Test
	void aClaimOfAnotherTypeNamesNoTier() throws Exception {
		this.mvc.perform(get("/api/plans").with(jwt().jwt((token) -> token.subject("jwt-number").claim("plan", 2))))
			.andExpect(header().string("RateLimit-Policy", FREE));
	}

	@Test
	void anOidcUserWithTheClaimGetsItsTierCaseInsensitively() throws Exception {
		this.mvc
			.perform(get("/api/plans")
				.with(oidcLogin().idToken((token) -> token.subject("oidc-paid").claim("plan", "PAID"))))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", PAID));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(PlansController.class)
	static class TierClaimApplication {

		@Bean
		ManualTimeSource timeSource() {
			return new ManualTimeSource();
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class PlansController {

		@GetMapping("/api/plans")
		String plans() {
			return "ok";
		}

	}

}
