/**
 * The in-memory backend: a bounded map of per-key state, safe for concurrent use without
 * a global lock.
 */
@NullMarked
package dev.ratelimit.core.memory;

import org.jspecify.annotations.NullMarked;
