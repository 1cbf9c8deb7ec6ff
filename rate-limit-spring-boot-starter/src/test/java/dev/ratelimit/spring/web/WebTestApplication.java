package dev.ratelimit.spring.web;

import java.util.List;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.MutableTimeSource;
import dev.ratelimit.spring.testsupport.RecordingListener;
import dev.ratelimit.spring.testsupport.RecordingSleeper;

/**
 * A small web application for MockMvc tests: a controller per behaviour, a fake clock, a
 * sleeper that advances it, and Spring Security letting everyone in (tests authenticate
 * with request post-processors).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(WebTestApplication.TestController.class)
class WebTestApplication {

	@Bean
	MutableTimeSource timeSource() {
		return new MutableTimeSource();
	}

	@Bean
	RecordingSleeper sleeper(MutableTimeSource timeSource) {
		return new RecordingSleeper(timeSource);
	}

	@Bean
	RecordingListener listener() {
		return new RecordingListener();
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.httpBasic(Customizer.withDefaults())
			.build();
	}

	@RestController
	static class TestController {

		private volatile DeferredResult<String> pending = new DeferredResult<>();

		@GetMapping({ "/api/geocode", "/api/plans", "/api/ip", "/api/weighted", "/api/observed", "/api/smooth",
				"/api/in-flight/sync", "/api/open", "/api/get-only" })
		String ok() {
			return "ok";
		}

		@GetMapping("/api/in-flight/async")
		DeferredResult<String> async() {
			this.pending = new DeferredResult<>();
			return this.pending;
		}

		void completeAsync() {
			this.pending.setResult("done");
		}

		@GetMapping("/api/in-flight/fail")
		String fail() {
			throw new IllegalStateException("handler failed");
		}

		@PostMapping("/api/batch")
		@RateLimited(policy = "batch", cost = "#{#queries.size()}")
		List<String> batch(@RequestBody List<String> queries) {
			return queries;
		}

		@GetMapping("/api/shelf/{item}")
		@RateLimited("batch")
		String shelfItem(@PathVariable String item) {
			return item;
		}

		@GetMapping("/api/shelf/plain")
		String shelfPlain() {
			return "plain";
		}

		@GetMapping("/api/annotated-only")
		@RateLimited("geocode-burst")
		String annotatedOnly() {
			return "ok";
		}

	}

}
