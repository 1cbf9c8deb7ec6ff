/**
 * Resolving the client key and the tier of a call.
 */
@NullMarked
package dev.ratelimit.spring.key;

import org.jspecify.annotations.NullMarked;
