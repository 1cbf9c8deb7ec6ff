package dev.ratelimit.spring.reactive;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.FluxExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.spring.RateLimitOutcome;
import dev.ratelimit.spring.testsupport.MutableTimeSource;
import dev.ratelimit.spring.testsupport.RecordingListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The starter in a WebFlux application served by Netty, driven over HTTP by
 * {@link WebTestClient}, with BlockHound failing any blocking call on an event loop:
 * filter rules and {@code @RateLimited} handlers returning {@code Mono} and {@code Flux},
 * against the in-memory backend on a fake clock. Each test uses its own client key.
 */
@SpringBootTest(classes = ReactiveTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@ActiveProfiles("reactive")
class ReactiveWebTests {

	@Autowired
	private WebTestClient client;

	@Autowired
	private MutableTimeSource clock;

	@LocalServerPort
	private int port;

	@Autowired
	private RecordingListener listener;

	@Autowired
	private ReactiveTestApplication.Quotes quotes;

	@BeforeAll
	static void blockHound() {
		BlockHoundInstalled.check();
	}

	@Test
	void workedExampleOneTenOfABurstOfTwelvePassThenFiveMoreAfterOneSecond() {
		for (int i = 0; i < 10; i++) {
			geocode("burst-key").expectStatus().isOk();
		}
		for (int i = 0; i < 2; i++) {
			geocode("burst-key").expectStatus()
				.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
				.expectHeader()
				.valueEquals("Retry-After", "1");
		}
		this.clock.advance(Duration.ofSeconds(1));
		for (int i = 0; i < 5; i++) {
			geocode("burst-key").expectStatus().isOk();
		}
		geocode("burst-key").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void writesTheSameHeadersAndProblemAsTheServletSide() {
		geocode("header-key");
		geocode("header-key");
		geocode("header-key").expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"geocode-burst\";q=10;w=2")
			.expectHeader()
			.valueEquals("RateLimit", "\"geocode-burst\";r=7;t=1");
		for (int i = 0; i < 7; i++) {
			geocode("header-key");
		}
		geocode("header-key").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
			.expectHeader()
			.valueEquals("Retry-After", "1")
			.expectHeader()
			.valueEquals("RateLimit", "\"geocode-burst\";r=0;t=2")
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded")
			.jsonPath("$.title")
			.isEqualTo("Too Many Requests")
			.jsonPath("$.status")
			.isEqualTo(429)
			.jsonPath("$.instance")
			.isEqualTo("/api/geocode")
			.jsonPath("$.violated-policies[0]")
			.isEqualTo("geocode-burst")
			.jsonPath("$.retryAfter")
			.isEqualTo(1);
	}

	@Test
	void readsTheTierFromTheReactiveSecurityContext() {
		// paid: 5 a minute, keyed by the principal
		for (int i = 0; i < 5; i++) {
			plans("paid").expectStatus().isOk();
		}
		plans("paid").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// free: 2 a minute, a key of its own
		plans("free").expectStatus().isOk().expectHeader().valueEquals("RateLimit-Policy", "\"plans\";q=2;w=60");
		plans("free").expectStatus().isOk();
		plans("free").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(this.listener.last().tier()).isEqualTo("free");
	}

	@Test
	void keysByTheClientAddressBehindATrustedProxyWhateverAForgedHopSays() {
		// the peer (127.0.0.1) is a trusted proxy: the address it forwards is the key,
		// and what the client wrote before it changes nothing
		ip("198.51.100.1, 203.0.113.7").expectStatus().isOk();
		ip("198.51.100.2, 203.0.113.7").expectStatus().isOk();
		ip("198.51.100.3, 203.0.113.7").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// another client behind the same proxy has a quota of its own
		ip("203.0.113.8").expectStatus().isOk();
	}

	@Test
	void evaluatesASpelCostOverTheArgumentsOfAMonoHandler() {
		weighted("spel-client", 7).expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit", "\"weighted\";r=3;t=42");
		weighted("spel-client", 4).expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		weighted("spel-client", 3).expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit", "\"weighted\";r=0;t=60");
	}

	@Test
	void evaluatesASpelCostOverTheExchange() {
		this.client.get()
			.uri("/api/exchange?n=9")
			.header("X-Client", "exchange-client")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit", "\"weighted\";r=1;t=54");
	}

	@Test
	void neverRejectsForAShadowPolicyButRecordsIt() {
		observed().expectStatus().isOk();
		assertThat(this.listener.last().outcomes()).containsEntry("observed", RateLimitOutcome.ALLOWED);
		observed().expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"observed\";q=1;w=60")
			.expectHeader()
			.valueEquals("RateLimit", "\"observed\";r=0;t=60");
		assertThat(this.listener.last().outcomes()).containsEntry("observed", RateLimitOutcome.SHADOW_REJECTED);
	}

	@Test
	void givesBackAConcurrencyPermitWhenTheClientCancelsAStream() {
		Flux<Long> first = stream("cancelling");
		StepVerifier.create(first.take(2)).expectNextCount(2).verifyComplete();
		// take(2) cancelled the stream: the permit comes back once the server sees the
		// connection close
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(streamStatus("cancelling")).isEqualTo(HttpStatus.OK));
	}

	@Test
	void refusesASecondStreamWhileTheFirstHoldsThePermit() {
		List<Long> received = new CopyOnWriteArrayList<>();
		Disposable first = stream("holding").subscribe(received::add);
		try {
			Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !received.isEmpty());
			assertThat(streamStatus("holding")).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		}
		finally {
			first.dispose();
		}
	}

	@Test
	void decidesAFilterRuleAndAnAnnotatedMonoHandlerInOneDecision() {
		int before = this.listener.events().size();
		this.client.get()
			.uri("/api/merged")
			.header("X-Client", "merged-client")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"weighted\";q=10;w=60, \"quotes\";q=3;w=60");
		// one event for both policies, each charged the higher cost (2)
		assertThat(this.listener.events()).hasSize(before + 1);
		assertThat(this.listener.last().outcomes()).containsOnlyKeys("weighted", "quotes");
		assertThat(this.listener.last().result().statuses()).extracting((status) -> status.remaining())
			.containsExactly(8L, 1L);
	}

	@Test
	void decidesOnSubscriptionNotOnAssembly() {
		Mono<String> assembled = this.quotes.quote("assembled");
		assertThat(this.quotes.invocations()).as("the method runs on subscription only").isZero();
		for (int i = 0; i < 3; i++) {
			StepVerifier.create(assembled).expectNext("quote for assembled").verifyComplete();
		}
		// each subscription a call of its own: the fourth is over 3 a minute, an error
		// signal, and the method is not invoked for it
		StepVerifier.create(assembled).expectError(RateLimitExceededException.class).verify(Duration.ofSeconds(5));
		assertThat(this.quotes.invocations()).isEqualTo(3);
	}

	@Test
	void givesBackAConcurrencyPermitWhenAPublisherCompletesOrFails() {
		// one permit: each call gets it only if the one before gave it back
		StepVerifier.create(this.quotes.several("released")).expectNext("a", "b", "c").verifyComplete();
		StepVerifier.create(this.quotes.failing("released"))
			.expectErrorMessage("no quote for released")
			.verify(Duration.ofSeconds(5));
		StepVerifier.create(this.quotes.several("released")).expectNextCount(3).verifyComplete();
		StepVerifier.create(this.quotes.several("released").take(1)).expectNext("a").verifyComplete();
		StepVerifier.create(this.quotes.several("released")).expectNextCount(3).verifyComplete();
	}

	@Test
	void refusesAConcurrentSubscriberWhileAPublisherHoldsThePermit() {
		StepVerifier.create(this.quotes.several("held"), 1)
			.expectNext("a")
			.then(() -> StepVerifier.create(this.quotes.several("held"))
				.expectError(RateLimitExceededException.class)
				.verify(Duration.ofSeconds(5)))
			.thenCancel()
			.verify(Duration.ofSeconds(5));
	}

	@Test
	void limitsAnOrdinaryMethodOfAReactiveApplicationOnTheCallingThread() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.quotes.ordinary("ordinary")).isEqualTo("ordinary quote for ordinary");
		}
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.quotes.ordinary("ordinary"));
	}

	@Test
	void shapesWithATimerNotASleepingThread() {
		// 10 a second, shaped: the second request at once is delayed by 100 ms on a
		// Reactor timer (BlockHound would fail a sleep on the event loop)
		smooth().expectStatus().isOk();
		smooth().expectStatus().isOk();
		assertThat(this.listener.last().outcomes()).containsEntry("smooth", RateLimitOutcome.DELAYED);
	}

	@Test
	void countsOnlyTheResponsesItsConditionHoldsFor() {
		login("mallory", "right-guess?").expectStatus().isUnauthorized();
		login("mallory", ReactiveTestApplication.PASSWORD).expectStatus().isOk();
		login("mallory", "another-guess").expectStatus().isUnauthorized();
		// two failures of 2 a minute, charged once each response was known: refused
		// now, even with the right password
		Awaitility.await()
			.atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> login("mallory", ReactiveTestApplication.PASSWORD).expectStatus()
				.isEqualTo(HttpStatus.TOO_MANY_REQUESTS));
	}

	private WebTestClient.ResponseSpec geocode(String apiKey) {
		return this.client.get().uri("/api/geocode").header("X-API-Key", apiKey).exchange();
	}

	private WebTestClient.ResponseSpec plans(String user) {
		return this.client.get()
			.uri("/api/plans")
			.headers((headers) -> headers.setBasicAuth(user, ReactiveTestApplication.PASSWORD))
			.exchange();
	}

	private WebTestClient.ResponseSpec ip(String forwardedFor) {
		return this.client.get().uri("/api/ip").header("X-Forwarded-For", forwardedFor).exchange();
	}

	private WebTestClient.ResponseSpec weighted(String client, int n) {
		return this.client.get().uri("/api/weighted?n=" + n).header("X-Client", client).exchange();
	}

	private WebTestClient.ResponseSpec smooth() {
		return this.client.get().uri("/api/smooth").header("X-Client", "smooth-client").exchange();
	}

	private WebTestClient.ResponseSpec login(String user, String password) {
		return this.client.get().uri("/api/login?password=" + password).header("X-User", user).exchange();
	}

	private WebTestClient.ResponseSpec observed() {
		return this.client.get().uri("/api/observed").header("X-Client", "shadowed").exchange();
	}

	/**
	 * Returns a stream's events, read through a client of its own that keeps the
	 * connection open until the subscriber cancels.
	 */
	private Flux<Long> stream(String client) {
		return WebClient.create("http://localhost:" + this.port)
			.get()
			.uri("/api/stream/" + client)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.retrieve()
			.bodyToFlux(Long.class);
	}

	/**
	 * Opens a stream and returns its status; an open stream is read for one event and
	 * then closed, so that it gives its permit back.
	 */
	private HttpStatus streamStatus(String client) {
		FluxExchangeResult<String> result = this.client.get()
			.uri("/api/stream/" + client)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.exchange()
			.returnResult(String.class);
		HttpStatus status = HttpStatus.valueOf(result.getStatus().value());
		result.getResponseBody().take(1).blockLast(Duration.ofSeconds(10));
		return status;
	}

}
