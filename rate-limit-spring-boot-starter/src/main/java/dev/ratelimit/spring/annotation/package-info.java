/**
 * The {@code @RateLimited} annotation and the interceptor that enforces it.
 */
@NullMarked
package dev.ratelimit.spring.annotation;

import org.jspecify.annotations.NullMarked;
