package dev.ratelimit.example.quotes.docs;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
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

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.core.docs.DocExamples.ConsoleCommand;
import dev.ratelimit.example.quotes.BlockHoundInstalled;
import dev.ratelimit.spring.RateLimitService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The curl session of docs/REACTIVE.md, run in order against the example app on Netty,
 * under BlockHound: each test runs one console example of the doc (read from the doc) and
 * checks what it printed. The session was recorded on a real clock; here the limiter's
 * clock moves where the recorded run's time passed: the {@code sleep 1}s, the streams
 * read for {@code -m 2.5} and {@code -m 1} seconds, and the half second that the other
 * commands took before the loops of requests. The ticks come every 20 ms instead of every
 * second; their prices do not depend on it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "quotes.tick-interval=20ms")
@Import(ReactiveWalkThroughDocsTests.Clock.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReactiveWalkThroughDocsTests {

	private static final String REACTIVE = "docs/REACTIVE.md";

	private static final String QUOTE_ACME = "/api/quote?symbol=ACME";

	private static final String SYMBOLS = "/api/symbols";

	@LocalServerPort
	private int port;

	@Autowired
	private ManualTimeSource clock;

	@Autowired
	private RateLimitService service;

	private QuotesClient http;

	@BeforeAll
	static void blockHound() {
		BlockHoundInstalled.check();
	}

	@BeforeEach
	void client() {
		this.http = new QuotesClient(this.port);
	}

	@Test
	@Order(0)
	void theHandlersShownAreTheControllers() throws IOException {
		String source = withoutBlanks(
				Files.readString(Path.of("src/main/java/dev/ratelimit/example/quotes/web/QuoteController.java"),
						StandardCharsets.UTF_8));
		List<String> shown = new ArrayList<>();
		for (String line : DocExamples.block(REACTIVE, "handlers").split("\n")) {
			String code = withoutBlanks(line.replace("{ ... }", ""));
			if (!code.isEmpty()) {
				shown.add(code);
			}
		}
		assertThat(shown).hasSize(8).allSatisfy((code) -> assertThat(source).contains(code));
	}

	@Test
	@Order(1)
	void listsQuotesAndRefusesAnUnknownSymbol() {
		List<ConsoleCommand> commands = console("quotes", "curl -s localhost:8080/api/symbols",
				"curl -s 'localhost:8080/api/quote?symbol=ACME'", "curl -s 'localhost:8080/api/quote?symbol=NOPE'");
		ShownOutput.json(commands.get(0).output(), this.http.get(SYMBOLS).body());
		ShownOutput.json(commands.get(1).output(), this.http.get(QUOTE_ACME).body());
		ShownOutput.json(commands.get(2).output(), this.http.get("/api/quote?symbol=NOPE").body());
	}

	@Test
	@Order(2)
	void theWorkedExampleLetsTenOfTwelvePassThenFiveOfSixASecondLater() {
		List<ConsoleCommand> commands = console("burst",
				"seq 12 | xargs -P 12 -I{} curl -s -o /dev/null -w '%{http_code}\\n' -H 'X-API-Key: demo-free' 'localhost:8080/api/quote?symbol=ACME' | sort | uniq -c",
				"sleep 1; seq 6 | xargs -P 6 -I{} curl -s -o /dev/null -w '%{http_code}\\n' -H 'X-API-Key: demo-free' 'localhost:8080/api/quote?symbol=ACME' | sort | uniq -c");
		ShownOutput.statusCounts(commands.get(0).output(), this.http.statuses(12, QUOTE_ACME, "demo-free"));
		this.clock.advance(Duration.ofSeconds(1));
		ShownOutput.statusCounts(commands.get(1).output(), this.http.statuses(6, QUOTE_ACME, "demo-free"));
	}

	@Test
	@Order(3)
	void aRejectedRequest() {
		List<ConsoleCommand> commands = console("rejected",
				"curl -s -i -H 'X-API-Key: demo-free' 'localhost:8080/api/quote?symbol=ACME' | grep -E '^(HTTP|Content-Type|RateLimit|X-RateLimit|Retry-After)|^\\{'");
		ShownOutput.response(commands.get(0).output(), this.http.get(QUOTE_ACME, "demo-free"));
	}

	@Test
	@Order(4)
	void aBatchCostsOnePermitPerSymbol() {
		List<ConsoleCommand> commands = console("batch",
				"curl -s -D - -o /dev/null -H 'X-API-Key: demo-free' 'localhost:8080/api/quotes?symbols=ACME,GLOBEX,HOOLI' | grep -E '^HTTP|^RateLimit:'",
				"curl -s -H 'X-API-Key: demo-free' 'localhost:8080/api/quotes?symbols=INITECH,UMBRELLA'");
		ShownOutput.response(commands.get(0).output(),
				this.http.get("/api/quotes?symbols=ACME,GLOBEX,HOOLI", "demo-free"));
		ShownOutput.json(commands.get(1).output(),
				this.http.get("/api/quotes?symbols=INITECH,UMBRELLA", "demo-free").body());
	}

	@Test
	@Order(5)
	void aStreamHoldsAPermitWhileItIsOpen() {
		List<ConsoleCommand> commands = console("stream",
				"curl -sN -m 2.5 -H 'X-API-Key: demo-free' 'localhost:8080/api/ticks?symbol=ACME'",
				"curl -sN -H 'X-API-Key: demo-free' 'localhost:8080/api/ticks?symbol=ACME' > /dev/null &",
				"sleep 1; curl -s -i -H 'X-API-Key: demo-free' 'localhost:8080/api/ticks?symbol=GLOBEX' | grep -E '^(HTTP|RateLimit|Retry-After)'",
				"kill %1",
				"curl -s -o /dev/null -w '%{http_code}\\n' -m 1 -H 'X-API-Key: demo-free' 'localhost:8080/api/ticks?symbol=GLOBEX'");
		List<String> shownTicks = commands.get(0).outputLines();
		try (QuotesClient.OpenStream ticks = this.http.open("/api/ticks?symbol=ACME", "demo-free")) {
			assertThat(ticks.lines(shownTicks.size())).containsExactlyElementsOf(shownTicks);
		}
		released();
		this.clock.advance(Duration.ofMillis(2500));

		assertThat(commands.get(1).output()).isEmpty();
		try (QuotesClient.OpenStream background = this.http.open("/api/ticks?symbol=ACME", "demo-free")) {
			assertThat(background.lines(1)).hasSize(1);
			this.clock.advance(Duration.ofSeconds(1));
			ShownOutput.response(commands.get(2).output(), this.http.get("/api/ticks?symbol=GLOBEX", "demo-free"));
		}
		assertThat(commands.get(3).output()).isEmpty();
		released();

		try (QuotesClient.OpenStream ticks = this.http.open("/api/ticks?symbol=GLOBEX", "demo-free")) {
			assertThat(String.valueOf(ticks.status())).isEqualTo(commands.get(4).output().strip());
			assertThat(ticks.lines(1)).hasSize(1);
		}
		released();
		this.clock.advance(Duration.ofSeconds(1));
	}

	@Test
	@Order(6)
	void freePaidAndAnonymousCallersGetTheirTiersLimits() {
		// the commands since the first burst took half a second more than the sleeps
		// and streams in the recorded run
		this.clock.advance(Duration.ofMillis(500));
		List<ConsoleCommand> commands = console("tiers",
				"for i in $(seq 1 70); do curl -s -o /dev/null -w '%{http_code} ' -H 'X-API-Key: demo-free' localhost:8080/api/symbols; done | tr ' ' '\\n' | grep . | sort | uniq -c",
				"for i in $(seq 1 70); do curl -s -o /dev/null -w '%{http_code} ' -H 'X-API-Key: demo-paid' localhost:8080/api/symbols; done | tr ' ' '\\n' | grep . | sort | uniq -c",
				"for i in $(seq 1 11); do curl -s -o /dev/null -w '%{http_code} ' localhost:8080/api/symbols; done",
				"curl -s -H 'X-API-Key: nope' localhost:8080/api/symbols");
		ShownOutput.statusCounts(commands.get(0).output(), this.http.statuses(70, SYMBOLS, "demo-free"));
		ShownOutput.statusCounts(commands.get(1).output(), this.http.statuses(70, SYMBOLS, "demo-paid"));
		assertThat(this.http.statuses(11, SYMBOLS, null).stream().map(String::valueOf).collect(Collectors.joining(" ")))
			.isEqualTo(commands.get(2).output().strip());
		ShownOutput.json(commands.get(3).output(), this.http.get(SYMBOLS, "nope").body());
	}

	@Test
	@Order(7)
	void theMetricsTheHealthAndOneClientsState() {
		List<ConsoleCommand> commands = console("actuator",
				"curl -s localhost:8080/actuator/prometheus | grep '^ratelimit_requests_total' | grep 'tier=\"free\"'",
				"curl -s localhost:8080/actuator/health/rateLimit",
				"curl -s -u operator:change-me localhost:8080/actuator/health/rateLimit",
				"curl -s -o /dev/null -w '%{http_code}\\n' localhost:8080/actuator/ratelimits/api/demo-free",
				"curl -s -u operator:change-me 'localhost:8080/actuator/ratelimits/api/demo-free?tier=free'",
				"curl -s -o /dev/null -w '%{http_code}\\n' -u operator:change-me -X DELETE localhost:8080/actuator/ratelimits/api/demo-free",
				"curl -s -D - -o /dev/null -H 'X-API-Key: demo-free' localhost:8080/api/symbols | grep '^RateLimit:'");
		List<String> free = new ArrayList<>();
		for (String line : ShownOutput.grep(this.http.get("/actuator/prometheus").body(), "ratelimit_requests_total")) {
			if (line.contains("tier=\"free\"")) {
				free.add(line);
			}
		}
		ShownOutput.lines(commands.get(0).output(), free);
		ShownOutput.json(commands.get(1).output(), this.http.get("/actuator/health/rateLimit").body());
		ShownOutput.json(commands.get(2).output(), this.http.asOperator("/actuator/health/rateLimit").body());
		assertStatus(commands.get(3), this.http.get("/actuator/ratelimits/api/demo-free"));
		// the paid and anonymous loops and the reads above took a second after the free
		// tier's loop in the recorded run
		this.clock.advance(Duration.ofSeconds(1));
		ShownOutput.json(commands.get(4).output(),
				this.http.asOperator("GET", "/actuator/ratelimits/api/demo-free?tier=free").body());
		assertStatus(commands.get(5), this.http.asOperator("DELETE", "/actuator/ratelimits/api/demo-free"));
		ShownOutput.response("HTTP/1.1 200\n" + commands.get(6).output(), this.http.get(SYMBOLS, "demo-free"));
	}

	private static void assertStatus(ConsoleCommand command, HttpResponse<String> response) {
		assertThat(String.valueOf(response.statusCode())).as(command.command()).isEqualTo(command.output().strip());
	}

	/**
	 * Waits until the server has seen the stream's client go and given its permit back.
	 */
	private void released() {
		await().atMost(Duration.ofSeconds(10)).until(() -> this.service.heldDecisions() == 0);
	}

	private static List<ConsoleCommand> console(String example, String... commands) {
		List<ConsoleCommand> shown = DocExamples.console(REACTIVE, example);
		assertThat(shown).extracting(ConsoleCommand::command).containsExactly(commands);
		return shown;
	}

	private static String withoutBlanks(String text) {
		return text.replaceAll("\\s+", "");
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
