package dev.ratelimit.example.quotes.market;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import reactor.core.publisher.Flux;
import reactor.core.publisher.SynchronousSink;

/**
 * A simulated market of a few fictional listings. A listing's quote is its reference
 * price. Its ticks are a random walk from that price, seeded by the symbol: every stream
 * of a symbol walks the same way, so that what a client sees can be reproduced (the docs'
 * walk-through prints it).
 */
public final class Market {

	private static final String CURRENCY = "USD";

	/**
	 * The largest step of the walk, in hundredths of a percent.
	 */
	private static final int MAX_STEP_BASIS_POINTS = 40;

	private final Map<String, Listing> listings = new LinkedHashMap<>();

	/**
	 * Creates a market of the given listings.
	 * @param listings the listings, in the order {@link #symbols()} gives them
	 */
	public Market(List<Listing> listings) {
		for (Listing listing : listings) {
			if (this.listings.put(listing.symbol(), listing) != null) {
				throw new IllegalArgumentException("Two listings have the symbol " + listing.symbol());
			}
		}
	}

	/**
	 * Returns the market the application serves.
	 * @return five fictional listings
	 */
	public static Market simulated() {
		return new Market(List.of(new Listing("ACME", "Acme Corporation", 14250),
				new Listing("GLOBEX", "Globex Corporation", 8710), new Listing("HOOLI", "Hooli", 120400),
				new Listing("INITECH", "Initech", 2375), new Listing("UMBRELLA", "Umbrella Corporation", 31000)));
	}

	/**
	 * Returns the symbols of the listings.
	 * @return the symbols
	 */
	public List<String> symbols() {
		return List.copyOf(this.listings.keySet());
	}

	/**
	 * Returns the quote of a listing.
	 * @param symbol the listing's symbol, in any case
	 * @return the quote
	 * @throws UnknownSymbolException if no listing has the symbol
	 */
	public Quote quote(String symbol) {
		Listing listing = listing(symbol);
		return new Quote(listing.symbol(), listing.name(), price(listing.referenceCents()), CURRENCY);
	}

	/**
	 * Returns the ticks of a listing, as fast as they are requested: tick 0 is the
	 * reference price, each next one moves by at most 0.4%. The caller paces them.
	 * @param symbol the listing's symbol, in any case
	 * @return the endless ticks, or an error if no listing has the symbol
	 */
	public Flux<Tick> ticks(String symbol) {
		return Flux.defer(() -> {
			Listing listing = listing(symbol);
			return Flux.generate(() -> new Walk(listing), Walk::next);
		});
	}

	private Listing listing(String symbol) {
		Listing listing = this.listings.get(symbol.toUpperCase(Locale.ROOT));
		if (listing == null) {
			throw new UnknownSymbolException(symbol);
		}
		return listing;
	}

	private static BigDecimal price(long cents) {
		return BigDecimal.valueOf(cents, 2);
	}

	/**
	 * Where a stream's walk is: the next tick's sequence and price.
	 */
	private static final class Walk {

		private final String symbol;

		private final SplittableRandom random;

		private long sequence;

		private long cents;

		Walk(Listing listing) {
			this.symbol = listing.symbol();
			this.random = new SplittableRandom(listing.symbol().hashCode());
			this.cents = listing.referenceCents();
		}

		Walk next(SynchronousSink<Tick> sink) {
			sink.next(new Tick(this.symbol, this.sequence, price(this.cents)));
			int step = this.random.nextInt(-MAX_STEP_BASIS_POINTS, MAX_STEP_BASIS_POINTS + 1);
			this.cents = Math.max(1, this.cents + this.cents * step / 10_000);
			this.sequence++;
			return this;
		}

	}

}
