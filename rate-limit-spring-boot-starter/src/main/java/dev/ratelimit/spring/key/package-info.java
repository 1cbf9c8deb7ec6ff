/**
 * The built-in key strategies and tier resolvers, and the factory that makes a policy's
 * key resolver.
 */
@NullMarked
package dev.ratelimit.spring.key;

import org.jspecify.annotations.NullMarked;
