package dev.ratelimit.spring.autoconfigure;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;

import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.TierResolver;
import dev.ratelimit.spring.key.AuthorityTierResolver;
import dev.ratelimit.spring.key.RequestAttributeTierResolver;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.client.tier-claim} and the class path: spring-security-oauth2-core
 * stays optional. An application without it starts as before, and one that names a claim
 * without it fails start-up naming the property.
 */
class TierClaimClassPathTests {

	private static final String OAUTH2 = "org.springframework.security.oauth2.";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=3/1m");

	@AfterEach
	void clearSecurityContext() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void startsWithoutTheOAuth2ClassesWhenNoClaimIsNamed() {
		this.runner.withClassLoader(new FilteredClassLoader(OAUTH2))
			.run((context) -> assertThat(context).hasNotFailed()
				.getBean(TierResolver.class)
				.isInstanceOf(AuthorityTierResolver.class));
	}

	@Test
	void aClaimNamedWithoutTheOAuth2ClassesFailsStartUpNamingTheProperty() {
		this.runner.withClassLoader(new FilteredClassLoader(OAUTH2))
			.withPropertyValues("ratelimit.client.tier-claim=plan")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.client.tier-claim",
					"is 'plan', but spring-security-oauth2-core, which reads claims, is not on the class path"));
	}

	@Test
	void aClaimNamedWithoutSpringSecurityFailsStartUpNamingTheProperty() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.security."))
			.withPropertyValues("ratelimit.client.tier-claim=plan")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.client.tier-claim",
					"is 'plan', but Spring Security, whose authentication holds the claim, is not on the class path"));
	}

	@Test
	void withoutSpringSecurityAndWithoutAClaimTheRequestAttributeResolves() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.security."))
			.run((context) -> assertThat(context).hasNotFailed()
				.getBean(TierResolver.class)
				.isExactlyInstanceOf(RequestAttributeTierResolver.class));
	}

	@Test
	void aBlankClaimReadsNoClaim() {
		this.runner.withPropertyValues("ratelimit.client.tier-claim= ").run((context) -> {
			SecurityContextHolder.getContext().setAuthentication(jwt("plan", "paid"));
			assertThat(context.getBean(TierResolver.class).resolveTier(call())).isNull();
		});
	}

	@Test
	void theDefaultResolverReadsTheNamedClaim() {
		this.runner.withPropertyValues("ratelimit.client.tier-claim=plan").run((context) -> {
			SecurityContextHolder.getContext().setAuthentication(jwt("plan", "paid"));
			assertThat(context.getBean(TierResolver.class).resolveTier(call())).isEqualTo("paid");
			SecurityContextHolder.getContext().setAuthentication(jwt("plan", List.of("gold", "beta")));
			assertThat(context.getBean(TierResolver.class).resolveTier(call())).isEqualTo("gold");
			SecurityContextHolder.getContext().setAuthentication(jwt("plan", 42));
			assertThat(context.getBean(TierResolver.class).resolveTier(call())).isNull();
			SecurityContextHolder.getContext().setAuthentication(jwt("plan", List.of()));
			assertThat(context.getBean(TierResolver.class).resolveTier(call())).isNull();
			SecurityContextHolder.getContext().setAuthentication(jwt("scope", "read"));
			assertThat(context.getBean(TierResolver.class).resolveTier(call())).isNull();
		});
	}

	@Test
	void aUsersTierResolverReplacesTheDefaultOne() {
		this.runner.withPropertyValues("ratelimit.client.tier-claim=plan")
			.withBean(TierResolver.class, () -> (context) -> "mine")
			.run((context) -> assertThat(context.getBean(TierResolver.class).resolveTier(call())).isEqualTo("mine"));
	}

	private static JwtAuthenticationToken jwt(String claim, Object value) {
		Jwt jwt = Jwt.withTokenValue("token")
			.header("alg", "none")
			.subject("alice")
			.claim(claim, value)
			.issuedAt(Instant.now())
			.build();
		return new JwtAuthenticationToken(jwt, List.of());
	}

	private static RateLimitContext call() {
		return RateLimitContext.forRequest(new ServletRateLimitRequest(new MockHttpServletRequest()), null);
	}

}
