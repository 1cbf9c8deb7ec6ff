/**
 * The servlet filter, the rate-limit headers and the 429 and 503 problem responses.
 */
@NullMarked
package dev.ratelimit.spring.web;

import org.jspecify.annotations.NullMarked;
