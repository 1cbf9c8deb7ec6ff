package dev.ratelimit.sample.geocoding.docs;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.core.docs.DocExamples.ConsoleCommand;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The curl session of docs/SAMPLE.md, run in order against the sample over real HTTP:
 * each test runs one console example of the doc (read from the doc) and checks what it
 * printed. The session was recorded on a real clock; here the limiter's clock moves where
 * the recorded run's time passed: the {@code sleep 1}, and the second and a half that the
 * loops of requests took before the actuator views.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(SampleWalkThroughDocsTests.Clock.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext
class SampleWalkThroughDocsTests {

	private static final String SAMPLE = "docs/SAMPLE.md";

	private static final String GEOCODE_RABAT = "/api/geocode?q=Rabat";

	private static final String REVERSE = "/api/reverse?lat=34&lon=-6";

	@LocalServerPort
	private int port;

	@Autowired
	private ManualTimeSource clock;

	private SampleClient http;

	@BeforeEach
	void client() {
		this.http = new SampleClient(this.port);
	}

	@Test
	@Order(1)
	void geocodesAndReverseGeocodes() {
		// the recorded session started a quarter into a second of the global sliding
		// window (its headers below depend on it)
		this.clock.advance(Duration.ofMillis(250));
		List<ConsoleCommand> commands = console("geocode", "curl -s 'localhost:8080/api/geocode?q=sao%20paulo&limit=2'",
				"curl -s 'localhost:8080/api/reverse?lat=34.0209&lon=-6.8416'");
		ShownOutput.json(commands.get(0).output(), this.http.get("/api/geocode?q=sao%20paulo&limit=2").body());
		ShownOutput.json(commands.get(1).output(), this.http.get("/api/reverse?lat=34.0209&lon=-6.8416").body());
	}

	@Test
	@Order(2)
	void theWorkedExampleLetsTenOfTwelvePassThenFiveOfSixASecondLater() {
		List<ConsoleCommand> commands = console("burst",
				"seq 12 | xargs -P 12 -I{} curl -s -o /dev/null -w '%{http_code}\\n' -H 'X-API-Key: demo-free' 'localhost:8080/api/geocode?q=Rabat' | sort | uniq -c",
				"sleep 1; seq 6 | xargs -P 6 -I{} curl -s -o /dev/null -w '%{http_code}\\n' -H 'X-API-Key: demo-free' 'localhost:8080/api/geocode?q=Rabat' | sort | uniq -c");
		ShownOutput.statusCounts(commands.get(0).output(), this.http.statuses(12, GEOCODE_RABAT, "demo-free"));
		this.clock.advance(Duration.ofSeconds(1));
		ShownOutput.statusCounts(commands.get(1).output(), this.http.statuses(6, GEOCODE_RABAT, "demo-free"));
	}

	@Test
	@Order(3)
	void aRejectedRequestInFull() {
		List<ConsoleCommand> commands = console("rejected",
				"curl -s -i -H 'X-API-Key: demo-free' 'localhost:8080/api/geocode?q=Rabat'");
		ShownOutput.response(commands.get(0).output(), this.http.get(GEOCODE_RABAT, "demo-free"));
	}

	@Test
	@Order(4)
	void theHeadersOfAnAllowedRequest() {
		List<ConsoleCommand> commands = console("headers",
				"curl -s -i -H 'X-API-Key: demo-paid' 'localhost:8080/api/reverse?lat=34&lon=-6'");
		ShownOutput.response(commands.get(0).output(), this.http.get(REVERSE, "demo-paid"));
	}

	@Test
	@Order(5)
	void freePaidAndAnonymousCallersGetTheirTiersLimits() {
		List<ConsoleCommand> commands = console("tiers",
				"for i in $(seq 1 70); do curl -s -o /dev/null -w '%{http_code} ' -H 'X-API-Key: demo-free' 'localhost:8080/api/reverse?lat=34&lon=-6'; done | tr ' ' '\\n' | grep . | sort | uniq -c",
				"for i in $(seq 1 70); do curl -s -o /dev/null -w '%{http_code} ' -H 'X-API-Key: demo-paid' 'localhost:8080/api/reverse?lat=34&lon=-6'; done | tr ' ' '\\n' | grep . | sort | uniq -c",
				"for i in $(seq 1 11); do curl -s -o /dev/null -w '%{http_code} ' 'localhost:8080/api/reverse?lat=34&lon=-6'; done",
				"curl -s -H 'X-API-Key: nope' 'localhost:8080/api/geocode?q=Rabat'");
		ShownOutput.statusCounts(commands.get(0).output(), this.http.statuses(70, REVERSE, "demo-free"));
		ShownOutput.statusCounts(commands.get(1).output(), this.http.statuses(70, REVERSE, "demo-paid"));
		assertThat(this.http.statuses(11, REVERSE, null).stream().map(String::valueOf).collect(Collectors.joining(" ")))
			.isEqualTo(commands.get(2).output().strip());
		ShownOutput.json(commands.get(3).output(), this.http.get(GEOCODE_RABAT, "nope").body());
	}

	@Test
	@Order(6)
	void theActuatorViews() {
		// the loops above took about a second and a half in the recorded run
		this.clock.advance(Duration.ofMillis(1500));
		List<ConsoleCommand> commands = console("actuator",
				"curl -s -o /dev/null -w '%{http_code}\\n' localhost:8080/actuator/ratelimits/geocode-burst/demo-free",
				"curl -s -u operator:change-me localhost:8080/actuator/ratelimits/geocode-burst/demo-free",
				"curl -s -u operator:change-me 'localhost:8080/actuator/ratelimits/api/demo-free?tier=free'",
				"curl -s -o /dev/null -w '%{http_code}\\n' -X DELETE localhost:8080/actuator/ratelimits/api/demo-free",
				"curl -s -o /dev/null -w '%{http_code}\\n' -u operator:change-me -X DELETE localhost:8080/actuator/ratelimits/api/demo-free",
				"curl -s -u operator:change-me 'localhost:8080/actuator/ratelimits/api/demo-free?tier=free'",
				"curl -s localhost:8080/actuator/prometheus | grep '^ratelimit_requests_total' | grep 'tier=\"free\"'",
				"curl -s localhost:8080/actuator/health/rateLimit",
				"curl -s -u operator:change-me localhost:8080/actuator/health/rateLimit");
		assertStatus(commands.get(0), this.http.get("/actuator/ratelimits/geocode-burst/demo-free"));
		ShownOutput.json(commands.get(1).output(),
				this.http.asOperator("GET", "/actuator/ratelimits/geocode-burst/demo-free").body());
		ShownOutput.json(commands.get(2).output(),
				this.http.asOperator("GET", "/actuator/ratelimits/api/demo-free?tier=free").body());
		assertStatus(commands.get(3), this.http.delete("/actuator/ratelimits/api/demo-free"));
		assertStatus(commands.get(4), this.http.asOperator("DELETE", "/actuator/ratelimits/api/demo-free"));
		ShownOutput.json(commands.get(5).output(),
				this.http.asOperator("GET", "/actuator/ratelimits/api/demo-free?tier=free").body());
		List<String> free = new ArrayList<>();
		for (String line : ShownOutput.grep(this.http.get("/actuator/prometheus").body(), "ratelimit_requests_total")) {
			if (line.contains("tier=\"free\"")) {
				free.add(line);
			}
		}
		ShownOutput.lines(commands.get(6).output(), free);
		ShownOutput.json(commands.get(7).output(), this.http.get("/actuator/health/rateLimit").body());
		ShownOutput.json(commands.get(8).output(), this.http.asOperator("GET", "/actuator/health/rateLimit").body());
	}

	@Test
	@Order(7)
	void aBatchCostsOnePermitPerQuery() {
		List<ConsoleCommand> commands = console("batch",
				"seq 25 | sed 's/.*/\"Rabat\"/' | paste -sd, | sed 's/.*/[&]/' > batch.json",
				"curl -s -o /dev/null -D - -H 'X-API-Key: demo-free' -H 'Content-Type: application/json' -d @batch.json localhost:8080/api/geocode/batch | grep -E '^HTTP|^RateLimit:'",
				"curl -s -o /dev/null -D - -H 'X-API-Key: demo-free' -H 'Content-Type: application/json' -d @batch.json localhost:8080/api/geocode/batch | grep -E '^HTTP|^RateLimit:'",
				"curl -s -o /dev/null -D - -H 'X-API-Key: demo-free' -H 'Content-Type: application/json' -d @batch.json localhost:8080/api/geocode/batch | grep -E '^HTTP|^RateLimit:|^Retry-After'",
				"curl -s -H 'X-API-Key: demo-free' -H 'Content-Type: application/json' -d '[]' localhost:8080/api/geocode/batch");
		assertThat(commands.get(0).output()).isEmpty();
		String batch = "[" + String.join(",", Collections.nCopies(25, "\"Rabat\"")) + "]";
		for (int i = 1; i <= 3; i++) {
			ShownOutput.response(commands.get(i).output(), this.http.post("/api/geocode/batch", "demo-free", batch));
		}
		ShownOutput.json(commands.get(4).output(), this.http.post("/api/geocode/batch", "demo-free", "[]").body());
	}

	private static List<ConsoleCommand> console(String example, String... commands) {
		List<ConsoleCommand> shown = DocExamples.console(SAMPLE, example);
		assertThat(shown).extracting(ConsoleCommand::command).containsExactly(commands);
		return shown;
	}

	private static void assertStatus(ConsoleCommand command, HttpResponse<String> response) {
		assertThat(response.statusCode()).as(command.command()).hasToString(command.output().strip());
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
