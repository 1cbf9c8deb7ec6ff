package dev.ratelimit.sample.geocoding.docs;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.core.docs.DocExamples.ConsoleCommand;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import dev.ratelimit.sample.geocoding.GeocodingApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The last console example of docs/SAMPLE.md ({@code two-instances}), read from the doc:
 * two instances of the sample with the {@code redis} profile on one Redis (the test
 * harness's, under a key prefix of this test's own instead of {@code geocoding-rl}) share
 * the free tier's 60 requests. Redis's clock decides and cannot be held still, so what
 * depends on the time the requests took is checked in its form only: the 429's {@code t}
 * and {@code Retry-After} (the doc's come from requests sent within a second), and the
 * refill period in the token bucket's key.
 */
class SampleRedisDocsTests {

	private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private static final List<SampleClient> clients = new ArrayList<>();

	private static RedisEndpoint redis;

	private static String prefix;

	@BeforeAll
	static void startTwoInstances() {
		redis = TestRedis.standalone();
		prefix = TestRedis.uniquePrefix();
		for (int i = 0; i < 2; i++) {
			ConfigurableApplicationContext context = new SpringApplicationBuilder(GeocodingApplication.class).run(
					"--spring.profiles.active=redis", "--server.port=0", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--ratelimit.redis.key-prefix=" + prefix,
					// a token an hour instead of a second, so that the 61st request is
					// rejected however long the test's requests take
					"--ratelimit.policies.api.tiers.free[0].rate=60/1h");
			instances.add(context);
			clients.add(new SampleClient(((WebServerApplicationContext) context).getWebServer().getPort()));
		}
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void twoInstancesOnOneRedisShareTheFreeTiersSixtyRequests() {
		List<ConsoleCommand> commands = DocExamples.console("docs/SAMPLE.md", "two-instances");
		assertThat(commands).extracting(ConsoleCommand::command)
			.containsExactly("./mvnw -B -q package -DskipTests",
					"java -jar sample-geocoding-app/target/sample-geocoding-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis &",
					"java -jar sample-geocoding-app/target/sample-geocoding-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis --server.port=8081 &",
					"curl -s -u operator:change-me localhost:8081/actuator/health/rateLimit",
					"seq 1 60 | xargs -P 6 -I{} sh -c 'port=$((8080 + {} % 2)); curl -s -o /dev/null -w \"$port:%{http_code}\\n\" -H \"X-API-Key: demo-free\" \"localhost:$port/api/reverse?lat=34&lon=-6\"' | sort | uniq -c",
					"curl -s -i -H 'X-API-Key: demo-free' 'localhost:8081/api/reverse?lat=34&lon=-6' | grep -E '^HTTP|^Retry-After|^RateLimit:'",
					"curl -s -i -H 'X-API-Key: demo-free' 'localhost:8080/api/reverse?lat=34&lon=-6' | grep -E '^HTTP|^Retry-After|^RateLimit:'",
					"redis-cli --scan --pattern 'geocoding-rl:*'");
		ShownOutput.json(commands.get(3).output(),
				clients.get(1).asOperator("GET", "/actuator/health/rateLimit").body());

		List<String> spread = new ArrayList<>();
		for (int i = 1; i <= 60; i++) {
			int instance = i % 2;
			spread.add((8080 + instance) + ":"
					+ clients.get(instance).get("/api/reverse?lat=34&lon=-6", "demo-free").statusCode());
		}
		ShownOutput.statusCounts(commands.get(4).output(), spread);

		assertRejected(commands.get(5).output(), clients.get(1).get("/api/reverse?lat=34&lon=-6", "demo-free"));
		assertRejected(commands.get(6).output(), clients.get(0).get("/api/reverse?lat=34&lon=-6", "demo-free"));

		List<String> keys = new ArrayList<>();
		try (RespClient client = redis.client()) {
			String cursor = "0";
			do {
				List<?> page = (List<?>) client.command("SCAN", cursor, "MATCH", prefix + ":*");
				cursor = String.valueOf(page.get(0));
				for (Object key : (List<?>) page.get(1)) {
					keys.add("geocoding-rl" + String.valueOf(key).substring(prefix.length()));
				}
			}
			while (!cursor.equals("0"));
		}
		List<String> shownKeys = commands.get(7).outputLines();
		// one key per limit, named by the policy, the client key's hash, the limit's name
		// and its layout: not by its parameters, so that a changed limit keeps its state
		assertThat(keys).containsExactlyInAnyOrderElementsOf(shownKeys);
	}

	/**
	 * Asserts a rejection as the doc shows it, but for the seconds that depend on how
	 * long the requests took.
	 */
	private static void assertRejected(String shown, HttpResponse<String> response) {
		List<String> lines = List.of(shown.strip().split("\n"));
		assertThat(lines).hasSize(3);
		assertThat(lines.get(0)).isEqualTo("HTTP/1.1 " + response.statusCode());
		String rateLimit = response.headers().firstValue("RateLimit").orElseThrow();
		assertThat(lines.get(1)).startsWith("RateLimit: " + rateLimit.substring(0, rateLimit.indexOf(";t=") + 3));
		assertThat(lines.get(2)).startsWith("Retry-After: ");
		assertThat(response.headers().firstValue("Retry-After")).isPresent();
	}

}
