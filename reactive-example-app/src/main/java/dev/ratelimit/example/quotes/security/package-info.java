/**
 * Who the caller is: API keys that carry a tier, and the operator who may read and reset
 * one client's limits.
 */
@NullMarked
package dev.ratelimit.example.quotes.security;

import org.jspecify.annotations.NullMarked;
