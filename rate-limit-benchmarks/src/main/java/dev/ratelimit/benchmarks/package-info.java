/**
 * JMH benchmarks of the in-memory limiter against Bucket4j, Resilience4j and Guava, the
 * retained-heap measurement, and the report that {@code run.sh} writes to
 * {@code docs/BENCHMARKS.md}.
 */
package dev.ratelimit.benchmarks;
