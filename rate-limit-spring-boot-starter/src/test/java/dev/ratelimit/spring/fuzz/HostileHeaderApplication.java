package dev.ratelimit.spring.fuzz;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.ApplicationContextFactory;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.mock.web.MockServletContext;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.WebSecurityCustomizer;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.firewall.StrictHttpFirewall;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.support.GenericWebApplicationContext;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimiter;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

/**
 * The application under {@link HostileHeaderFuzz}: one policy per key strategy
 * ({@code ip}, {@code api-key}, {@code header:X-Client}, {@code principal}) on
 * {@code /fuzz/keys}, a policy whose cost comes from a header on {@code /fuzz/cost}, an
 * in-memory limiter that records the keys it is asked about, a fake clock, and Spring
 * Security letting everyone in. Its firewall lets every header value through, so that
 * whatever a client sends reaches the rate-limit filter (Tomcat and Security's default
 * firewall refuse some of it before that in real life).
 */
@SpringBootConfiguration
// Redis is not used here: three applications start faster without its client
@EnableAutoConfiguration(excludeName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisRepositoriesAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.observation.LettuceObservationAutoConfiguration" })
@AutoConfigureMockMvc
@Import(HostileHeaderApplication.FuzzController.class)
class HostileHeaderApplication {

	/** What {@code /fuzz/cost} costs: the header's value as a long. */
	static final String COST_EXPRESSION = "#{T(java.lang.Long).parseLong(#request.getHeader('X-Cost'))}";

	/**
	 * Starts the application in a mock servlet environment, as {@code @SpringBootTest}
	 * does.
	 * @param client the {@code ratelimit.client.*} properties of this run
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(Map<String, String> client) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("ratelimit.memory.max-keys", "20000");
		policy(properties, "by-ip", "ip", "3/1m");
		policy(properties, "by-api-key", "api-key", "3/1m");
		policy(properties, "by-header", "header:X-Client", "3/1m");
		policy(properties, "by-principal", "principal", "3/1m");
		policy(properties, "by-cost", "ip", "100/1m");
		properties.put("ratelimit.filters[0].patterns", "/fuzz/keys");
		properties.put("ratelimit.filters[0].policies", "by-ip,by-api-key,by-header,by-principal");
		properties.put("ratelimit.filters[1].patterns", "/fuzz/cost");
		properties.put("ratelimit.filters[1].policies", "by-cost");
		properties.put("ratelimit.filters[1].cost", COST_EXPRESSION);
		client.forEach((name, value) -> properties.put("ratelimit.client." + name, value));
		SpringApplication application = new SpringApplication(HostileHeaderApplication.class);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		application.setApplicationContextFactory(
				ApplicationContextFactory.of(() -> new GenericWebApplicationContext(new MockServletContext())));
		application.setBannerMode(Banner.Mode.OFF);
		application.setLogStartupInfo(false);
		application.setDefaultProperties(properties);
		return application.run();
	}

	private static void policy(Map<String, Object> properties, String name, String key, String rate) {
		properties.put("ratelimit.policies." + name + ".key", key);
		properties.put("ratelimit.policies." + name + ".limits[0].rate", rate);
	}

	@Bean
	MutableTimeSource timeSource() {
		return new MutableTimeSource();
	}

	@Bean
	KeyRecordingRateLimiter rateLimiter(MutableTimeSource timeSource) {
		return new KeyRecordingRateLimiter(
				InMemoryRateLimiter.builder().maxKeys(20_000).timeSource(timeSource).build());
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	WebSecurityCustomizer anyHeaderValue() {
		StrictHttpFirewall firewall = new StrictHttpFirewall();
		firewall.setAllowedHeaderNames((name) -> true);
		firewall.setAllowedHeaderValues((value) -> true);
		return (web) -> web.httpFirewall(firewall);
	}

	@RestController
	static class FuzzController {

		@GetMapping({ "/fuzz/keys", "/fuzz/cost" })
		String ok() {
			return "ok";
		}

	}

	/**
	 * Records the keyed limits of every call, then decides it with the in-memory limiter.
	 */
	static final class KeyRecordingRateLimiter implements RateLimiter {

		private final RateLimiter delegate;

		private final List<List<KeyedLimit>> calls = new ArrayList<>();

		KeyRecordingRateLimiter(RateLimiter delegate) {
			this.delegate = delegate;
		}

		@Override
		public Decision acquire(List<KeyedLimit> limits, long cost) {
			synchronized (this.calls) {
				this.calls.add(List.copyOf(limits));
			}
			return this.delegate.acquire(limits, cost);
		}

		@Override
		public List<LimitStatus> inspect(List<KeyedLimit> limits) {
			return this.delegate.inspect(limits);
		}

		@Override
		public void release(Decision decision) {
			this.delegate.release(decision);
		}

		@Override
		public void reset(KeyedLimit limit) {
			this.delegate.reset(limit);
		}

		/** The calls since the last time, which are forgotten. */
		List<List<KeyedLimit>> takeCalls() {
			synchronized (this.calls) {
				List<List<KeyedLimit>> taken = List.copyOf(this.calls);
				this.calls.clear();
				return taken;
			}
		}

	}

}
