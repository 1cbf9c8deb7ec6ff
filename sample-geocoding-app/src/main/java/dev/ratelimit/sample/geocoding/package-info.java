/**
 * A sample geocoding API, shipped with its own gazetteer, protected by the rate-limit
 * starter.
 */
@NullMarked
package dev.ratelimit.sample.geocoding;

import org.jspecify.annotations.NullMarked;
