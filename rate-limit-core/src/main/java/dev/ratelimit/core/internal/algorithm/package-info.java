/**
 * The pure math of each algorithm: state, the current time and a cost in, an outcome out.
 * No I/O, no clocks, no locks. Internal to the core, for its backends: not API, and it
 * may change without notice.
 */
@NullMarked
package dev.ratelimit.core.internal.algorithm;

import org.jspecify.annotations.NullMarked;
