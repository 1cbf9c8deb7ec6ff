/**
 * The public API of the rate-limiting engine: limits, decisions and the limiter that
 * makes them.
 */
@NullMarked
package dev.ratelimit.core;

import org.jspecify.annotations.NullMarked;
