package dev.ratelimit.spring.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.metrics.RateLimitMetrics;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Live reload with Spring Cloud: the limits live in a file that the application imports;
 * the test edits the file between requests and asks for {@code POST /actuator/refresh},
 * as an operator would after a Config Server changed. A valid edit applies from the next
 * request and keeps what each client spent; an invalid one is refused whole, logged
 * naming each bad property, and the old limits still hold.
 */
@SpringBootTest(classes = RuntimeTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.config.import=optional:file:" + LiveReloadTests.CONFIG,
				"management.endpoints.web.exposure.include=refresh,ratelimits",
				// a refresh reads the configuration again in a fresh Environment, which
				// keeps the inlined test properties (the import) only when told
				"spring.cloud.refresh.additional-property-sources-to-retain=Inlined Test Properties" })
@ExtendWith(OutputCaptureExtension.class)
class LiveReloadTests {

	static final String CONFIG = "target/live-reload-tests/ratelimit.properties";

	static {
		write("60/1m", "api");
	}

	@LocalServerPort
	private int port;

	@Autowired
	private MeterRegistry meters;

	@Test
	void aValidEditAppliesFromTheNextRequestKeepingSpentPermitsAndAnInvalidOneIsRefusedWhole(CapturedOutput output)
			throws Exception {
		Http http = new Http(this.port);
		HttpResponse<String> last = null;
		for (int i = 0; i < 50; i++) {
			last = http.api("reloading-client");
			assertThat(last.statusCode()).isEqualTo(200);
		}
		assertThat(last.headers().firstValue("RateLimit"))
			.hasValueSatisfying((limit) -> assertThat(limit).startsWith("\"api\";r=10;"));
		Instant started = appliedAt(http);

		write("100/1m", "api");
		HttpResponse<String> refreshed = http.operator("POST", "/actuator/refresh", null);
		assertThat(refreshed.statusCode()).isEqualTo(200);
		assertThat(refreshed.body()).contains("ratelimit.policies.api.tiers.free[0].rate");

		// 60/1m with 50 spent becomes 100/1m: 50 left, and this request takes one
		HttpResponse<String> raised = http.api("reloading-client");
		assertThat(raised.headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=100;"));
		assertThat(raised.headers().firstValue("RateLimit"))
			.hasValueSatisfying((limit) -> assertThat(limit).startsWith("\"api\";r=49;"));
		assertThat(appliedAt(http)).isAfter(started);
		assertThat(reloads("applied")).isEqualTo(1);

		write("0/1m", "missing-policy");
		assertThat(http.operator("POST", "/actuator/refresh", null).statusCode()).isEqualTo(200);
		assertThat(output.getOut()).contains("ERROR")
			.contains("Refused the changed rate-limit configuration; the running one stays")
			.contains("ratelimit.policies.api.tiers.free[0].rate")
			.contains("ratelimit.filters[0].policies");
		assertThat(reloads("rejected")).isEqualTo(1);
		HttpResponse<String> kept = http.api("reloading-client");
		assertThat(kept.headers().firstValue("RateLimit-Policy"))
			.hasValueSatisfying((policy) -> assertThat(policy).startsWith("\"api\";q=100;"));
		assertThat(kept.headers().firstValue("RateLimit"))
			.hasValueSatisfying((limit) -> assertThat(limit).startsWith("\"api\";r=48;"));
		assertThat(JsonPath.parse(http.get("/actuator/ratelimits").body())
			.read("$.policies.api.tiers.free[*].rate", List.class)).containsExactly("100/1m");
	}

	private static Instant appliedAt(Http http) throws Exception {
		return Instant.parse(
				JsonPath.parse(http.get("/actuator/ratelimits").body()).read("$.configurationApplied", String.class));
	}

	private double reloads(String result) {
		return this.meters.get(RateLimitMetrics.RELOADS).tag("result", result).counter().count();
	}

	private static void write(String rate, String filterPolicy) {
		String text = String.join("\n", "ratelimit.policies.api.key=api-key",
				"ratelimit.policies.api.tiers.free[0].rate=" + rate, "ratelimit.filters[0].patterns=/api/**",
				"ratelimit.filters[0].policies=" + filterPolicy, "");
		try {
			Path file = Path.of(CONFIG);
			Files.createDirectories(file.getParent());
			Files.writeString(file, text, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
