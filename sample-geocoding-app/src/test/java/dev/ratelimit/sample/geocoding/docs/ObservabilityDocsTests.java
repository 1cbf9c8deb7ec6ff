package dev.ratelimit.sample.geocoding.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.yaml.snakeyaml.Yaml;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.test.annotation.DirtiesContext;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.core.docs.DocExamples.ConsoleCommand;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The examples of docs/OBSERVABILITY.md against the sample over real HTTP, read from the
 * doc and run in the doc's order as one session on a clock that stands still: the metrics
 * after a few requests, the endpoint's overview, one client's state and its reset, the
 * health; and the PromQL and the Prometheus configuration, against a real scrape.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(ObservabilityDocsTests.Clock.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext
class ObservabilityDocsTests {

	private static final String OBSERVABILITY = "docs/OBSERVABILITY.md";

	private static final Path APPLICATION_YML = Path.of("src/main/resources/application.yml");

	/** A number as Prometheus writes a sample's value. */
	private static final String VALUE = "[0-9.eE+-]+";

	@LocalServerPort
	private int port;

	@Autowired
	private Environment environment;

	private SampleClient http;

	@BeforeEach
	void client() {
		this.http = new SampleClient(this.port);
	}

	@Test
	@Order(1)
	void theMetricsAfterAFewRequests() {
		List<ConsoleCommand> commands = console("metrics",
				"for i in 1 2 3; do curl -s -H 'X-API-Key: demo-free' 'localhost:8080/api/geocode?q=Rabat&limit=1' > /dev/null; done",
				"curl -s localhost:8080/actuator/prometheus | grep '^ratelimit' | grep -v bucket");
		assertThat(this.http.statuses(3, "/api/geocode?q=Rabat&limit=1", "demo-free")).containsOnly(200);
		List<String> scraped = ShownOutput.grep(this.http.get("/actuator/prometheus").body(), "ratelimit")
			.stream()
			.filter((line) -> !line.contains("bucket"))
			.toList();
		List<String> shown = commands.get(1).outputLines();
		assertThat(shown).last().isEqualTo("...");
		assertThat(scraped).hasSizeGreaterThanOrEqualTo(shown.size() - 1);
		for (int i = 0; i < shown.size() - 1; i++) {
			// the decision times are the recorded run's own
			String line = shown.get(i);
			String expected = line.matches("ratelimit_decision_seconds_(sum|max)\\{.*")
					? Pattern.quote(line.substring(0, line.lastIndexOf(' ') + 1)) + VALUE : Pattern.quote(line);
			assertThat(scraped.get(i)).matches(expected);
		}
	}

	@Test
	@Order(2)
	void theQueriesReadMetricsAndLabelsOfTheScrape() {
		String scrape = this.http.get("/actuator/prometheus").body();
		String promql = DocExamples.block(OBSERVABILITY, "promql");
		Matcher selector = Pattern.compile("(ratelimit_\\w+)(?:\\{([^}]*)})?").matcher(promql);
		int selectors = 0;
		while (selector.find()) {
			selectors++;
			String metric = selector.group(1);
			assertThat(scrape).as(metric).containsPattern("(?m)^" + metric + "[{ ]");
			if (selector.group(2) != null) {
				for (String matcher : selector.group(2).split(",")) {
					String label = matcher.strip().split("[!=~]")[0];
					assertThat(scrape).as(metric + " " + label)
						.containsPattern("(?m)^" + metric + "\\{[^}]*\\b" + label + "=");
				}
			}
		}
		assertThat(selectors).isGreaterThanOrEqualTo(5);
		Matcher grouping = Pattern.compile("by \\(([^)]*)\\) \\(rate\\((ratelimit_\\w+)").matcher(promql);
		while (grouping.find()) {
			for (String label : grouping.group(1).split(",")) {
				assertThat(scrape).as(grouping.group(2) + " by " + label)
					.containsPattern("(?m)^" + grouping.group(2) + "\\{[^}]*\\b" + label.strip() + "=");
			}
		}
	}

	@Test
	@Order(3)
	void theOverviewOfTheConfiguration() {
		List<ConsoleCommand> commands = console("overview", "curl localhost:8080/actuator/ratelimits");
		// when the configuration was applied is the recorded run's own
		String applied = "\"configurationApplied\":\"[^\"]+\"";
		String shown = commands.get(0).output().replaceAll(applied, "\"configurationApplied\":\"T\"");
		String served = this.http.get("/actuator/ratelimits").body();
		assertThat(served).containsPattern(applied);
		ShownOutput.json(shown, served.replaceAll(applied, "\"configurationApplied\":\"T\""));
	}

	@Test
	@Order(4)
	void oneClientsStateConsumingNothing() {
		List<ConsoleCommand> commands = console("client",
				"curl -u operator:change-me localhost:8080/actuator/ratelimits/geocode-burst/demo-free",
				"curl -u operator:change-me 'localhost:8080/actuator/ratelimits/api/demo-free?tier=free'");
		for (int i = 0; i < 2; i++) {
			// read twice: reading consumes nothing
			ShownOutput.json(commands.get(0).output(),
					this.http.asOperator("GET", "/actuator/ratelimits/geocode-burst/demo-free").body());
		}
		ShownOutput.json(commands.get(1).output(),
				this.http.asOperator("GET", "/actuator/ratelimits/api/demo-free?tier=free").body());
	}

	@Test
	@Order(5)
	void resettingOneClient() {
		List<ConsoleCommand> commands = console("reset",
				"curl -u operator:change-me -X DELETE localhost:8080/actuator/ratelimits/geocode-burst/demo-free",
				"curl -u operator:change-me localhost:8080/actuator/ratelimits/geocode-burst/demo-free");
		assertThat(this.http.asOperator("DELETE", "/actuator/ratelimits/geocode-burst/demo-free").statusCode())
			.isEqualTo(204);
		assertThat(commands.get(0).output()).isEmpty();
		ShownOutput.json(commands.get(1).output(),
				this.http.asOperator("GET", "/actuator/ratelimits/geocode-burst/demo-free").body());
	}

	@Test
	@Order(6)
	void theHealthContributor() {
		List<ConsoleCommand> commands = console("health",
				"curl -u operator:change-me localhost:8080/actuator/health/rateLimit   # details: show-details when-authorized");
		assertThat(this.environment.getProperty("management.endpoint.health.show-details"))
			.isEqualTo("when-authorized");
		ShownOutput.json(commands.get(0).output(), this.http.asOperator("GET", "/actuator/health/rateLimit").body());
	}

	@Test
	void theSampleExposesTheEndpointAsShown() throws Exception {
		String applicationYml = Files.readString(APPLICATION_YML);
		assertThat(applicationYml).contains(DocExamples.block(OBSERVABILITY, "exposure"));
		assertThat(this.http.get("/actuator/ratelimits").statusCode()).isEqualTo(200);
	}

	@Test
	void prometheusScrapesTheSampleAsConfigured() throws Exception {
		Map<String, Object> prometheus = new Yaml().load(DocExamples.block(OBSERVABILITY, "scrape-config"));
		@SuppressWarnings("unchecked")
		Map<String, Object> job = ((List<Map<String, Object>>) prometheus.get("scrape_configs")).get(0);
		@SuppressWarnings("unchecked")
		String target = ((List<Map<String, List<String>>>) job.get("static_configs")).get(0).get("targets").get(0);
		// the port of the sample's application.yml (the test itself runs on a random
		// port)
		Map<String, Object> application = new Yaml().load(Files.readString(APPLICATION_YML));
		@SuppressWarnings("unchecked")
		Object port = ((Map<String, Object>) application.get("server")).get("port");
		assertThat(target).isEqualTo("localhost:" + port);
		assertThat(this.environment.getProperty("spring.application.name")).isEqualTo(job.get("job_name"));
		String scrape = this.http.get((String) job.get("metrics_path")).body();
		assertThat(scrape).contains("ratelimit_requests_total");
	}

	private static List<ConsoleCommand> console(String example, String... commands) {
		List<ConsoleCommand> shown = DocExamples.console(OBSERVABILITY, example);
		assertThat(shown).extracting(ConsoleCommand::command).containsExactly(commands);
		return shown;
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
