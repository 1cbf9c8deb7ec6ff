package dev.ratelimit.example.quotes.ratelimit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.FluxExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.example.quotes.BlockHoundInstalled;
import dev.ratelimit.example.quotes.market.Tick;
import dev.ratelimit.spring.RateLimitService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shipped limits of the reactive example, over real HTTP to its Netty server with
 * {@link WebTestClient}, with BlockHound failing any blocking call on an event loop and
 * the limiter's clock under the test's control (every test starts an hour after the
 * previous one, so all buckets are full again).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "quotes.tick-interval=20ms")
@AutoConfigureWebTestClient
@Import(QuotesRateLimitTests.Clock.class)
class QuotesRateLimitTests {

	private static final String QUOTE = "/api/quote?symbol=ACME";

	@Autowired
	private WebTestClient client;

	@Autowired
	private ManualTimeSource clock;

	@Autowired
	private RateLimitService service;

	@LocalServerPort
	private int port;

	private final List<Disposable> streams = new ArrayList<>();

	@BeforeAll
	static void blockHound() {
		BlockHoundInstalled.check();
	}

	@BeforeEach
	void anHourLater() {
		this.clock.advance(Duration.ofHours(1));
	}

	@AfterEach
	void closeStreams() {
		this.streams.forEach(Disposable::dispose);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.service.heldDecisions() == 0);
	}

	@Test
	void workedExampleTwelveQuotesAtOnceLetTenPassThenFiveOfSixASecondLater() {
		for (int i = 0; i < 9; i++) {
			get(QUOTE, "demo-free").expectStatus().isOk();
		}
		get(QUOTE, "demo-free").expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"api\";q=60;w=60, \"quote-burst\";q=10;w=2")
			.expectHeader()
			.valueEquals("RateLimit", "\"quote-burst\";r=0;t=2")
			.expectBody()
			.json("{\"symbol\":\"ACME\",\"name\":\"Acme Corporation\",\"price\":142.50,\"currency\":\"USD\"}");
		for (int i = 0; i < 2; i++) {
			get(QUOTE, "demo-free").expectStatus()
				.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
				.expectHeader()
				.valueEquals("Retry-After", "1")
				.expectHeader()
				.valueEquals("RateLimit", "\"quote-burst\";r=0;t=2")
				.expectHeader()
				.valueEquals("X-RateLimit-Limit", "10")
				.expectHeader()
				.valueEquals("X-RateLimit-Remaining", "0")
				.expectHeader()
				.valueEquals("X-RateLimit-Reset", "2")
				.expectHeader()
				.contentType(MediaType.APPLICATION_PROBLEM_JSON)
				.expectBody()
				.json("""
						{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
						 "title":"Too Many Requests","status":429,
						 "detail":"Rate limit exceeded for policy quote-burst; retry after 1 second",
						 "instance":"/api/quote","violated-policies":["quote-burst"],"retryAfter":1}""", true);
		}
		this.clock.advance(Duration.ofSeconds(1));
		for (int i = 0; i < 5; i++) {
			get(QUOTE, "demo-free").expectStatus().isOk();
		}
		get(QUOTE, "demo-free").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void theFreeTierAllowsSixtyRequestsAMinute() {
		for (int i = 0; i < 60; i++) {
			get("/api/symbols", "demo-free").expectStatus().isOk();
		}
		get("/api/symbols", "demo-free").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"api\";q=60;w=60")
			.expectHeader()
			.valueEquals("Retry-After", "1")
			.expectBody()
			.jsonPath("$.violated-policies[0]")
			.isEqualTo("api");
	}

	@Test
	void thePaidTierAllowsAThousandRequestsAMinute() {
		for (int i = 0; i < 99; i++) {
			get("/api/symbols", "demo-paid").expectStatus().isOk();
		}
		get("/api/symbols", "demo-paid").expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit", "\"api\";r=900;t=6");
	}

	@Test
	void anonymousCallersGetTenRequestsAMinuteByAddress() {
		for (int i = 0; i < 10; i++) {
			this.client.get().uri("/api/symbols").exchange().expectStatus().isOk();
		}
		this.client.get()
			.uri("/api/symbols")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"api\";q=10;w=60")
			.expectHeader()
			.valueEquals("Retry-After", "6");
	}

	@Test
	void anUnknownApiKeyIsRefusedBeforeTheRateLimiter() {
		get("/api/symbols", "nope").expectStatus()
			.isUnauthorized()
			.expectHeader()
			.valueEquals("WWW-Authenticate", "ApiKey header=\"X-API-Key\"")
			.expectHeader()
			.doesNotExist("RateLimit")
			.expectBody()
			.jsonPath("$.title")
			.isEqualTo("Unknown API key");
	}

	@Test
	void aBatchCostsOnePermitPerSymbol() {
		get("/api/quotes?symbols=ACME,GLOBEX,HOOLI", "demo-free").expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit", "\"api\";r=57;t=3")
			.expectBody()
			.jsonPath("$[*].symbol")
			.isEqualTo(List.of("ACME", "GLOBEX", "HOOLI"));
		String fiftyEight = String.join(",", Collections.nCopies(58, "ACME"));
		get("/api/quotes?symbols=" + fiftyEight, "demo-free").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("RateLimit", "\"api\";r=57;t=3");
		// an unknown symbol is a 404, charged as the request it was: failing requests are
		// not free
		get("/api/quotes?symbols=ACME,NOPE", "demo-free").expectStatus()
			.isNotFound()
			.expectHeader()
			.valueEquals("RateLimit", "\"api\";r=55;t=5")
			.expectBody()
			.jsonPath("$.symbol")
			.isEqualTo("NOPE");
	}

	@Test
	void anUnknownSymbolIsANotFoundProblem() {
		get("/api/quote?symbol=NOPE", "demo-paid").expectStatus()
			.isNotFound()
			.expectHeader()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectBody()
			.json("""
					{"title":"Unknown symbol","status":404,"instance":"/api/quote","symbol":"NOPE",
					 "detail":"No listing has the symbol 'NOPE'. GET /api/symbols lists the symbols."}""", true);
	}

	@Test
	void aFreeClientHoldsOneStreamAtATimeAndGetsThePermitBackWhenItCloses() {
		List<Tick> ticks = new CopyOnWriteArrayList<>();
		Disposable first = hold("demo-free", "ACME", ticks);
		await().atMost(Duration.ofSeconds(10)).until(() -> ticks.size() >= 3);
		assertThat(List.copyOf(ticks).subList(0, 3)).extracting(Tick::sequence).containsExactly(0L, 1L, 2L);
		ticksOf("GLOBEX", "demo-free").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"api\";q=60;w=60, \"tick-streams\";q=1;w=60")
			.expectHeader()
			.valueEquals("RateLimit", "\"tick-streams\";r=0;t=60")
			.expectHeader()
			.valueEquals("Retry-After", "60")
			.expectBody()
			.jsonPath("$.violated-policies[0]")
			.isEqualTo("tick-streams");
		first.dispose();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.service.heldDecisions() == 0);
		assertThat(openStatus("GLOBEX", "demo-free")).isEqualTo(HttpStatus.OK);
	}

	@Test
	void aPaidClientHoldsFiveStreams() {
		for (String symbol : List.of("ACME", "GLOBEX", "HOOLI", "INITECH", "UMBRELLA")) {
			List<Tick> ticks = new CopyOnWriteArrayList<>();
			hold("demo-paid", symbol, ticks);
			await().atMost(Duration.ofSeconds(10)).until(() -> !ticks.isEmpty());
		}
		assertThat(this.service.heldDecisions()).isEqualTo(5);
		ticksOf("ACME", "demo-paid").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("RateLimit", "\"tick-streams\";r=0;t=60");
	}

	private WebTestClient.ResponseSpec get(String uri, String apiKey) {
		return this.client.get().uri(uri).header("X-API-Key", apiKey).exchange();
	}

	private WebTestClient.ResponseSpec ticksOf(String symbol, String apiKey) {
		return this.client.get()
			.uri("/api/ticks?symbol=" + symbol)
			.header("X-API-Key", apiKey)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.exchange();
	}

	/**
	 * Opens a stream of ticks and keeps reading it until the test ends.
	 */
	private Disposable hold(String apiKey, String symbol, List<Tick> into) {
		Flux<Tick> ticks = WebClient.create("http://localhost:" + this.port)
			.get()
			.uri("/api/ticks?symbol=" + symbol)
			.header("X-API-Key", apiKey)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.retrieve()
			.bodyToFlux(Tick.class);
		Disposable stream = ticks.subscribe(into::add);
		this.streams.add(stream);
		return stream;
	}

	/**
	 * Opens a stream and returns its status; an open stream is read for one tick and
	 * closed, which gives its permit back.
	 */
	private HttpStatus openStatus(String symbol, String apiKey) {
		FluxExchangeResult<String> result = this.client.get()
			.uri("/api/ticks?symbol=" + symbol)
			.header("X-API-Key", apiKey)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.exchange()
			.returnResult(String.class);
		HttpStatus status = HttpStatus.valueOf(result.getStatus().value());
		result.getResponseBody().take(1).blockLast(Duration.ofSeconds(10));
		return status;
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
