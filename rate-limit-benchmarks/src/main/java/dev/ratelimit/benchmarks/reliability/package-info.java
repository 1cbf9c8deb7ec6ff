/**
 * The reliability campaign of {@code reliability.sh}: fault injection and load against
 * the sample app and the in-memory limiter, on servers it starts itself, and the report
 * it writes to {@code docs/RELIABILITY.md}.
 */
package dev.ratelimit.benchmarks.reliability;
