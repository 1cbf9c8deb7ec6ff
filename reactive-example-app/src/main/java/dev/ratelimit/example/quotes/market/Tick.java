package dev.ratelimit.example.quotes.market;

import java.math.BigDecimal;

/**
 * A price of a listing's stream.
 *
 * @param symbol the listing's symbol
 * @param sequence the tick's place in its stream, from 0
 * @param price the price
 */
public record Tick(String symbol, long sequence, BigDecimal price) {

}
