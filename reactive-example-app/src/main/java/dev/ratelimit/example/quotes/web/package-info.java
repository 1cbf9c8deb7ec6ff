/**
 * The HTTP API: quotes, a batch of quotes and a stream of ticks.
 */
@NullMarked
package dev.ratelimit.example.quotes.web;

import org.jspecify.annotations.NullMarked;
