/**
 * The Redis backend: every limit decided atomically on the server by one Lua script per
 * hash slot, with a failure policy for when Redis is slow or down, and optional two-tier
 * leasing.
 */
@NullMarked
package dev.ratelimit.core.redis;

import org.jspecify.annotations.NullMarked;
