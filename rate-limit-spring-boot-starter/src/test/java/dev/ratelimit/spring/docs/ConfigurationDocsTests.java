package dev.ratelimit.spring.docs;

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
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.user;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The complete example of docs/CONFIGURATION.md (example {@code complete}), read from the
 * doc, in a web application on a clock that stands still: each tier gets its limits, the
 * filters apply their policies to their paths and methods, and only the trusted proxy
 * names the client.
 */
@SpringBootTest(classes = ConfigurationDocsTests.GeocodingApplication.class)
@AutoConfigureMockMvc
class ConfigurationDocsTests {

	@DynamicPropertySource
	static void completeExample(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "docs/CONFIGURATION.md", "complete");
	}

	@Autowired
	private MockMvc mvc;

	@Test
	void aGetOfGeocodeIsLimitedByTheApiTheBackendCapacityAndTheBurstPolicies() throws Exception {
		this.mvc.perform(get("/api/geocode").header("X-API-Key", "all-three"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy",
					"\"api\";q=10;w=60, \"backend-capacity\";q=500;w=1, \"geocode-burst\";q=10;w=2"));
	}

	@Test
	void anotherMethodOfTheSamePathIsLimitedByTheFirstFilterOnly() throws Exception {
		this.mvc.perform(post("/api/geocode").header("X-API-Key", "post"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=60, \"backend-capacity\";q=500;w=1"));
	}

	@Test
	void eachTierGetsItsOwnApiLimitAndCallersWithoutOneTheAnonymousTiers() throws Exception {
		this.mvc.perform(post("/api/geocode").header("X-API-Key", "paid").with(tier("TIER_PAID")))
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=1000;w=60, \"backend-capacity\";q=500;w=1"));
		this.mvc.perform(post("/api/geocode").header("X-API-Key", "free").with(tier("TIER_FREE")))
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=60;w=60, \"backend-capacity\";q=500;w=1"));
		this.mvc.perform(post("/api/geocode").header("X-API-Key", "none"))
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=60, \"backend-capacity\";q=500;w=1"));
	}

	@Test
	void callersWithoutAnApiKeyBehindTheTrustedProxyAreKeyedByTheirForwardedAddress() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(forwarded("203.0.113.7")).andExpect(status().isOk());
		}
		this.mvc.perform(forwarded("203.0.113.7")).andExpect(status().isTooManyRequests());
		this.mvc.perform(forwarded("203.0.113.8")).andExpect(status().isOk());
	}

	private static MockHttpServletRequestBuilder forwarded(String client) {
		return post("/api/geocode").header("X-Forwarded-For", client).with((request) -> {
			request.setRemoteAddr("10.0.0.5");
			return request;
		});
	}

	private static org.springframework.test.web.servlet.request.RequestPostProcessor tier(String authority) {
		return user("caller").authorities(new SimpleGrantedAuthority(authority));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(GeocodeController.class)
	static class GeocodingApplication {

		@Bean
		MutableTimeSource timeSource() {
			return new MutableTimeSource();
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class GeocodeController {

		@GetMapping("/api/geocode")
		String geocode() {
			return "ok";
		}

		@PostMapping("/api/geocode")
		String post() {
			return "ok";
		}

	}

}
