/**
 * Actuator support: the {@code ratelimits} endpoint and the {@code rateLimit} health
 * contributor.
 */
@NullMarked
package dev.ratelimit.spring.actuate;

import org.jspecify.annotations.NullMarked;
