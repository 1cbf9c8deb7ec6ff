/**
 * The simulated market the API serves: a few fictional listings and their prices.
 */
@NullMarked
package dev.ratelimit.example.quotes.market;

import org.jspecify.annotations.NullMarked;
