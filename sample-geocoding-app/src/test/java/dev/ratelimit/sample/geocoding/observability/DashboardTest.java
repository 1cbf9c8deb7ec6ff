package dev.ratelimit.sample.geocoding.observability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.spring.key.ApiKeyResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard in {@code docs/grafana} queries only what the sample application
 * really publishes: after a few requests, every metric name in every panel's query (and
 * in the template variables) is in a scrape of {@code /actuator/prometheus}, and the
 * dashboard imports cleanly (a data source variable, no hard-wired data source). The
 * requests leave no trace in the limits: the test resets the demo client through the
 * endpoint afterwards.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class DashboardTest {

	private static final Path DASHBOARD = Path.of("docs", "grafana", "ratelimit-dashboard.json");

	/** A PromQL identifier that is not a function call (no parenthesis after it). */
	private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*(?![a-zA-Z0-9_:]*\\s*\\()");

	/** A Grafana variable query: the values of a label of a metric. */
	private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*(\\w+)\\s*,\\s*(\\w+)\\s*\\)");

	private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
			"bool", "offset", "and", "or", "unless", "inf", "nan");

	private static final HttpClient http = HttpClient.newHttpClient();

	private static final String OPERATOR_CREDENTIALS = Base64.getEncoder()
		.encodeToString("operator:change-me".getBytes(StandardCharsets.UTF_8));

	@LocalServerPort
	private int port;

	@Test
	void everyMetricThatTheDashboardQueriesIsInThePrometheusScrape() throws Exception {
		for (int i = 0; i < 3; i++) {
			assertThat(get("/api/geocode?q=Rabat&limit=1", "demo-free").statusCode()).isEqualTo(200);
		}
		assertThat(get("/api/reverse?lat=34.02&lon=-6.83", "demo-free").statusCode()).isEqualTo(200);
		HttpResponse<String> client = http.send(HttpRequest
			.newBuilder(URI.create("http://localhost:" + this.port + "/actuator/ratelimits/geocode-burst/demo-free"))
			.header("Authorization", "Basic " + OPERATOR_CREDENTIALS)
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(client.statusCode()).isEqualTo(200);
		assertThat(client.body()).contains("\"policy\":\"geocode-burst\"", "\"remaining\":");

		HttpResponse<String> scrape = get("/actuator/prometheus", null);
		assertThat(scrape.statusCode()).isEqualTo(200);
		Set<String> published = sampleNames(scrape.body());
		assertThat(published).contains("ratelimit_requests_total", "ratelimit_decision_seconds_bucket",
				"ratelimit_backend_failures_total", "ratelimit_keys");
		assertThat(scrape.body()).doesNotContain("demo-free")
			.doesNotContain(ApiKeyResolver.keyOf("demo-free").substring("key:".length()));

		for (String policy : List.of("api", "geocode-burst")) {
			assertThat(resetAsOperator(policy, "demo-free").statusCode()).isEqualTo(204);
		}

		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(locate(DASHBOARD)));
		List<String> queries = new ArrayList<>();
		for (JsonNode panel : dashboard.get("panels")) {
			assertThat(panel.get("datasource").get("uid").asString()).as(panel.get("title").asString())
				.isEqualTo("${datasource}");
			assertThat(panel.get("targets")).as(panel.get("title").asString()).isNotEmpty();
			for (JsonNode target : panel.get("targets")) {
				queries.add(target.get("expr").asString());
			}
		}
		JsonNode variables = dashboard.get("templating").get("list");
		assertThat(variables).anySatisfy((variable) -> {
			assertThat(variable.get("name").asString()).isEqualTo("datasource");
			assertThat(variable.get("type").asString()).isEqualTo("datasource");
			assertThat(variable.get("query").asString()).isEqualTo("prometheus");
		});
		for (JsonNode variable : variables) {
			if ("query".equals(variable.get("type").asString())) {
				Matcher labelValues = LABEL_VALUES.matcher(variable.get("query").get("query").asString());
				assertThat(labelValues.matches()).as(variable.toString()).isTrue();
				assertThat(scrape.body()).as(variable.toString())
					.containsPattern(Pattern.quote(labelValues.group(1)) + "\\{[^}]*\\b"
							+ Pattern.quote(labelValues.group(2)) + "=\"");
			}
		}
		assertThat(queries).hasSizeGreaterThanOrEqualTo(6);
		for (String query : queries) {
			Set<String> names = metricNames(query);
			assertThat(names).as(query).isNotEmpty();
			assertThat(published).as("metrics published for: " + query).containsAll(names);
		}
	}

	@Test
	void findsTheMetricNamesOfAQuery() {
		assertThat(
				metricNames("sum by (le, backend) (rate(ratelimit_decision_seconds_bucket{backend=\"memory\"}[5m]))"))
			.containsExactly("ratelimit_decision_seconds_bucket");
		assertThat(metricNames("sum by (policy) (rate(a_total{outcome=~\"x|y\"}[$__rate_interval])) / sum(b_total)"))
			.containsExactly("a_total", "b_total");
		assertThat(metricNames("histogram_quantile(0.99, sum by (le) (rate(x_bucket[1m])))"))
			.containsExactly("x_bucket");
	}

	/**
	 * Returns the metric names a PromQL query reads: its identifiers that are neither
	 * function names, keywords, numbers, nor inside label matchers, groupings, strings,
	 * ranges or Grafana variables.
	 */
	static Set<String> metricNames(String query) {
		String stripped = query.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")
			.replaceAll("\\{[^}]*}", " ")
			.replaceAll("\\[[^]]*]", " ")
			.replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
			.replaceAll("\\$\\w+", " ")
			.replaceAll("\\b\\d+(\\.\\d+)?([eE][-+]?\\d+)?\\b", " ");
		Set<String> names = new LinkedHashSet<>();
		Matcher matcher = IDENTIFIER.matcher(stripped);
		while (matcher.find()) {
			if (!KEYWORDS.contains(matcher.group().toLowerCase())) {
				names.add(matcher.group());
			}
		}
		return names;
	}

	private static Set<String> sampleNames(String scrape) {
		Set<String> names = new LinkedHashSet<>();
		for (String line : scrape.split("\n")) {
			if (line.isBlank() || line.startsWith("#")) {
				continue;
			}
			int end = 0;
			while (end < line.length() && line.charAt(end) != '{' && line.charAt(end) != ' ') {
				end++;
			}
			names.add(line.substring(0, end));
		}
		return names;
	}

	private static Path locate(Path relative) {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve(relative))) {
				return dir.resolve(relative);
			}
		}
		throw new IllegalStateException("No " + relative + " in " + Path.of("").toAbsolutePath() + " or above");
	}

	/**
	 * Gives the demo client its full limits back, as an operator would, so that other
	 * tests sharing this application context see fresh limits.
	 */
	private HttpResponse<Void> resetAsOperator(String policy, String client) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://localhost:" + this.port + "/actuator/ratelimits/" + policy + "/" + client))
			.DELETE()
			.header("Authorization", "Basic " + OPERATOR_CREDENTIALS)
			.build();
		return http.send(request, HttpResponse.BodyHandlers.discarding());
	}

	private HttpResponse<String> get(String path, String apiKey) throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path));
		if (apiKey != null) {
			request.header("X-API-Key", apiKey);
		}
		return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
