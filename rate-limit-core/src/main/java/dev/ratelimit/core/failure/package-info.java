/**
 * The failure policy: a decorator that decides calls when the limiter it wraps (a remote
 * store such as Redis) answers late or fails.
 */
@NullMarked
package dev.ratelimit.core.failure;

import org.jspecify.annotations.NullMarked;
