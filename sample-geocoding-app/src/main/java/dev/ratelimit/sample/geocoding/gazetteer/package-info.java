/**
 * An in-memory world gazetteer: place-name search and nearest-place lookup.
 */
@NullMarked
package dev.ratelimit.sample.geocoding.gazetteer;

import org.jspecify.annotations.NullMarked;
