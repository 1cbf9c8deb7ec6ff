/**
 * Micrometer metrics of rate-limit decisions, backend failures and the keys the in-memory
 * backend holds.
 */
@NullMarked
package dev.ratelimit.spring.metrics;

import org.jspecify.annotations.NullMarked;
