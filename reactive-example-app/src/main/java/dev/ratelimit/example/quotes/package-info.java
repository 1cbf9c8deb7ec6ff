/**
 * A small quotes API on WebFlux and Netty, protected by the rate-limit starter: the
 * reactive counterpart of the sample geocoding app.
 */
@NullMarked
package dev.ratelimit.example.quotes;

import org.jspecify.annotations.NullMarked;
