package dev.ratelimit.spring.web;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.RateLimitEvent;
import dev.ratelimit.spring.RateLimitListener;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.RecordingListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A {@link RateLimitListener} that throws on every decision changes no decision and keeps
 * no concurrency permit, on the filter's path and the annotation's alike; it is logged
 * without flooding the log, and counted.
 */
@SpringBootTest(classes = { WebTestApplication.class, ListenerFailureWebTests.FailingListenerConfiguration.class })
@AutoConfigureMockMvc
@ActiveProfiles("mvc")
@ExtendWith(OutputCaptureExtension.class)
class ListenerFailureWebTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private RecordingListener recording;

	@Autowired
	private MeterRegistry registry;

	@Test
	void aThrowingListenerLeaksNoPermitOfAFilterLimitedRequest() throws Exception {
		// in-flight: a concurrency limit of 1 per client, released when the response
		// completes
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "filter-listener"))
				.andExpect(status().isOk());
		}
	}

	@Test
	void aThrowingListenerLeaksNoPermitOfAnAnnotatedHandler() throws Exception {
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/listener/annotated").header("X-Client", "annotation-listener"))
				.andExpect(status().isOk());
		}
	}

	@Test
	void aThrowingListenerChangesNoRejection() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/geocode").header("X-API-Key", "listener-burst")).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/geocode").header("X-API-Key", "listener-burst"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void theOtherListenersStillHearOfEveryDecision() throws Exception {
		int before = this.recording.events().size();
		this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "heard")).andExpect(status().isOk());
		assertThat(this.recording.events()).hasSize(before + 1);
	}

	@Test
	void countsEachFailureTaggedWithTheListenersClass() throws Exception {
		double before = failures();
		for (int i = 0; i < 4; i++) {
			this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "counted")).andExpect(status().isOk());
		}
		assertThat(failures()).isEqualTo(before + 4);
	}

	@Test
	void warnsOnceWithTheStackTraceThenStaysQuiet(CapturedOutput output) throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/in-flight/sync").header("X-Client", "quiet")).andExpect(status().isOk());
		}
		// other tests of this class may have logged the first failure before this one
		// captured the output
		assertThat(output.getAll().split("RateLimitListener " + FailingListener.class.getName() + " failed", -1))
			.hasSizeLessThanOrEqualTo(2);
		assertThat(output.getAll()).doesNotContain("more times since its last warning");
	}

	private double failures() {
		var counter = this.registry.find("ratelimit.listener.failures")
			.tag("listener", FailingListener.class.getName())
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@TestConfiguration(proxyBeanMethods = false)
	@Import(AnnotatedController.class)
	static class FailingListenerConfiguration {

		@Bean
		FailingListener failingListener() {
			return new FailingListener();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Order(Ordered.HIGHEST_PRECEDENCE)
	static class FailingListener implements RateLimitListener {

		@Override
		public void onDecision(RateLimitEvent event) {
			throw new IllegalStateException("audit log unavailable");
		}

	}

	@RestController
	static class AnnotatedController {

		@GetMapping("/api/listener/annotated")
		@RateLimited("in-flight")
		String annotated() {
			return "ok";
		}

	}

}
