/**
 * The pure math of each algorithm: state, the current time and a cost in, an outcome out.
 * No I/O, no clocks, no locks.
 */
@NullMarked
package dev.ratelimit.core.algorithm;

import org.jspecify.annotations.NullMarked;
