/**
 * Auto-configuration of the rate limiter, its filter, annotation support and backends.
 */
@NullMarked
package dev.ratelimit.spring.autoconfigure;

import org.jspecify.annotations.NullMarked;
