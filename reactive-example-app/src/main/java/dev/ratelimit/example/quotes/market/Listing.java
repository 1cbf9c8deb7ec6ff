package dev.ratelimit.example.quotes.market;

import java.util.Objects;

/**
 * A listing of the market: its symbol, the company's name and its reference price.
 *
 * @param symbol the symbol, in capitals
 * @param name the company's name
 * @param referenceCents the reference price, in cents
 */
public record Listing(String symbol, String name, long referenceCents) {

	public Listing {
		Objects.requireNonNull(symbol, "symbol must not be null");
		Objects.requireNonNull(name, "name must not be null");
		if (referenceCents <= 0) {
			throw new IllegalArgumentException("referenceCents must be positive, but is " + referenceCents);
		}
	}

}
