/**
 * Who the caller is: API keys that carry a tier, and the protection of the actuator's
 * write operations.
 */
@NullMarked
package dev.ratelimit.sample.geocoding.security;

import org.jspecify.annotations.NullMarked;
