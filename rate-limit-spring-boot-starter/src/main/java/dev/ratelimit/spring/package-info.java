/**
 * Spring integration of the rate limiter: the single decision path that filter and
 * annotation share, and the key and tier resolver interfaces that it calls and
 * applications implement.
 */
@NullMarked
package dev.ratelimit.spring;

import org.jspecify.annotations.NullMarked;
