package dev.ratelimit.sample.geocoding.docs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.core.docs.DocExamples.ConsoleCommand;
import dev.ratelimit.sample.geocoding.GeocodingApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What docs/OBSERVABILITY.md shows of the sample while Redis is down, read from the doc:
 * the endpoint's 503 for one client's state (example {@code backend-down}) and the health
 * contributor's details under {@code local} (example {@code health-down}). The sample
 * runs with the {@code redis} profile against a port where nothing listens. (Under
 * {@code deny} the operator's requests would be refused first: the sample's limit on
 * failed authentication, which runs before Spring Security, fails closed too.)
 */
class BackendDownDocsTests {

	private static final String OBSERVABILITY = "docs/OBSERVABILITY.md";

	private static ConfigurableApplicationContext sample;

	private static SampleClient http;

	@BeforeAll
	static void startWithRedisDown() throws IOException {
		sample = new SpringApplicationBuilder(GeocodingApplication.class).run("--spring.profiles.active=redis",
				"--server.port=0", "--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + unusedPort(),
				"--ratelimit.on-backend-failure=local",
				// no Redis will come: start without waiting for it
				"--ratelimit.redis.startup-timeout=0");
		http = new SampleClient(((WebServerApplicationContext) sample).getWebServer().getPort());
	}

	@AfterAll
	static void stop() {
		sample.close();
	}

	@Test
	void readingOneClientWhileRedisIsDownAnswers503SayingWhy() {
		List<ConsoleCommand> commands = DocExamples.console(OBSERVABILITY, "backend-down");
		assertThat(commands).extracting(ConsoleCommand::command)
			.containsExactly("curl -s -u operator:change-me localhost:8080/actuator/ratelimits/api/demo-free");
		HttpResponse<String> response = http.asOperator("GET", "/actuator/ratelimits/api/demo-free");
		assertThat(response.statusCode()).isEqualTo(503);
		ShownOutput.json(commands.get(0).output(), response.body());
	}

	@Test
	void theHealthContributorIsDownAndSaysWhatCallsGetMeanwhile() {
		HttpResponse<String> response = http.asOperator("GET", "/actuator/health/rateLimit");
		assertThat(response.statusCode()).isEqualTo(503);
		ShownOutput.json(DocExamples.block(OBSERVABILITY, "health-down"), response.body());
	}

	/**
	 * A port on which nothing listens, so that connecting is refused at once.
	 */
	private static int unusedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
