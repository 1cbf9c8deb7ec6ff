package dev.ratelimit.example.quotes.web;

import java.time.Duration;
import java.util.List;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.example.quotes.market.Market;
import dev.ratelimit.example.quotes.market.Quote;
import dev.ratelimit.example.quotes.market.Tick;
import dev.ratelimit.spring.annotation.RateLimited;

/**
 * The quotes API. The filter rules of {@code application.yml} limit every {@code /api/**}
 * request by the caller's tier and {@code /api/quote} by a burst; the annotations here
 * charge a batch one permit per symbol and hold one of the caller's stream permits for as
 * long as a stream of ticks is open.
 */
@RestController
@RequestMapping("/api")
public class QuoteController {

	private final Market market;

	private final Duration tickInterval;

	public QuoteController(Market market, @Value("${quotes.tick-interval:1s}") Duration tickInterval) {
		this.market = market;
		this.tickInterval = tickInterval;
	}

	@GetMapping("/symbols")
	Mono<List<String>> symbols() {
		return Mono.just(this.market.symbols());
	}

	@GetMapping("/quote")
	Mono<Quote> quote(@RequestParam String symbol) {
		return Mono.fromSupplier(() -> this.market.quote(symbol));
	}

	@GetMapping("/quotes")
	@RateLimited(policy = "api", cost = "#{#symbols.size()}")
	Flux<Quote> quotes(@RequestParam List<String> symbols) {
		// every symbol is looked up before the first quote goes out: an unknown one is a
		// 404, not a stream cut short
		return Flux.defer(() -> Flux.fromIterable(symbols.stream().map(this.market::quote).toList()));
	}

	@GetMapping(path = "/ticks", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	@RateLimited("tick-streams")
	Flux<Tick> ticks(@RequestParam String symbol) {
		// a client that reads slowly misses ticks rather than queueing them
		return Flux.interval(Duration.ZERO, this.tickInterval)
			.onBackpressureDrop()
			.zipWith(this.market.ticks(symbol), (beat, tick) -> tick);
	}

}
