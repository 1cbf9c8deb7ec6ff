/**
 * Spring integration of the rate limiter: the single decision path that filter and annotation share.
 */
@NullMarked
package dev.ratelimit.spring;

import org.jspecify.annotations.NullMarked;
