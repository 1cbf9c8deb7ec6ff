/**
 * Per-client overrides: limits that replace a client's tier limits in one policy, kept in
 * memory, in Redis for a fleet, or in a store of the application's own.
 */
@NullMarked
package dev.ratelimit.spring.overrides;

import org.jspecify.annotations.NullMarked;
