/**
 * The geocoding REST API and its RFC 9457 problem responses.
 */
@NullMarked
package dev.ratelimit.sample.geocoding.web;

import org.jspecify.annotations.NullMarked;
