package dev.ratelimit.example.quotes.market;

import java.math.BigDecimal;

/**
 * The quote of a listing.
 *
 * @param symbol the listing's symbol
 * @param name the company's name
 * @param price the price
 * @param currency the currency of the price
 */
public record Quote(String symbol, String name, BigDecimal price, String currency) {

}
