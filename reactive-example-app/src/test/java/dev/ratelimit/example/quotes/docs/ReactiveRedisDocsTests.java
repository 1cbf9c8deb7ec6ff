package dev.ratelimit.example.quotes.docs;

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
import dev.ratelimit.example.quotes.BlockHoundInstalled;
import dev.ratelimit.example.quotes.QuotesApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The last console example of docs/REACTIVE.md ({@code two-instances}), read from the
 * doc: two instances of the example app with the {@code redis} profile on one Redis (the
 * test harness's, under a key prefix of this test's own instead of {@code quotes-rl})
 * share a client's quota, under BlockHound: no Redis call blocks an event loop. Redis's
 * clock decides and cannot be held still, so the seconds until full ({@code t}), which
 * depend on how long the requests took, are checked in their form only.
 */
class ReactiveRedisDocsTests {

	private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private static final List<QuotesClient> clients = new ArrayList<>();

	private static RedisEndpoint redis;

	private static String prefix;

	@BeforeAll
	static void startTwoInstances() {
		BlockHoundInstalled.check();
		redis = TestRedis.standalone();
		prefix = TestRedis.uniquePrefix();
		for (int i = 0; i < 2; i++) {
			ConfigurableApplicationContext context = new SpringApplicationBuilder(QuotesApplication.class).run(
					"--spring.profiles.active=redis", "--server.port=0", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--ratelimit.redis.key-prefix=" + prefix);
			instances.add(context);
			clients.add(new QuotesClient(((WebServerApplicationContext) context).getWebServer().getPort()));
		}
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void twoInstancesOnOneRedisShareAClientsQuota() {
		List<ConsoleCommand> commands = DocExamples.console("docs/REACTIVE.md", "two-instances");
		assertThat(commands).extracting(ConsoleCommand::command)
			.containsExactly("./mvnw -B -q -pl reactive-example-app package -DskipTests",
					"java -jar reactive-example-app/target/reactive-example-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis &",
					"java -jar reactive-example-app/target/reactive-example-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis --server.port=8081 &",
					"curl -s -u operator:change-me localhost:8081/actuator/health/rateLimit",
					"curl -s -D - -o /dev/null -H 'X-API-Key: demo-free' localhost:8080/api/symbols | grep '^RateLimit:'",
					"curl -s -D - -o /dev/null -H 'X-API-Key: demo-free' localhost:8081/api/symbols | grep '^RateLimit:'",
					"redis-cli --scan --pattern 'quotes-rl:*'");
		ShownOutput.json(commands.get(3).output(), clients.get(1).asOperator("/actuator/health/rateLimit").body());
		assertRemaining(commands.get(4).output(), clients.get(0).get("/api/symbols", "demo-free"));
		assertRemaining(commands.get(5).output(), clients.get(1).get("/api/symbols", "demo-free"));

		List<String> keys = new ArrayList<>();
		try (RespClient client = redis.client()) {
			String cursor = "0";
			do {
				List<?> page = (List<?>) client.command("SCAN", cursor, "MATCH", prefix + ":*");
				cursor = String.valueOf(page.get(0));
				for (Object key : (List<?>) page.get(1)) {
					keys.add("quotes-rl" + String.valueOf(key).substring(prefix.length()));
				}
			}
			while (!cursor.equals("0"));
		}
		// one key for the client's limit, wherever it spent
		assertThat(keys).containsExactlyInAnyOrderElementsOf(commands.get(6).outputLines());
	}

	/**
	 * Asserts the {@code RateLimit} header shown, but for the seconds until full.
	 */
	private static void assertRemaining(String shown, HttpResponse<String> response) {
		assertThat(response.statusCode()).isEqualTo(200);
		String header = shown.strip();
		String rateLimit = "RateLimit: " + response.headers().firstValue("RateLimit").orElseThrow();
		assertThat(rateLimit).startsWith(header.substring(0, header.indexOf(";t=") + 3)).matches(".*;t=\\d+");
	}

}
