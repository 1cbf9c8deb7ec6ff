/**
 * One Spring MVC endpoint on Tomcat, {@code GET /api/hello}, limited per API key
 * ({@code X-API-Key}) in the key's tier ({@code demo-free}: free, 60 a minute;
 * {@code demo-paid}: paid, 1000 a minute; any other key or none: free), by one limiter at
 * a time: the variant, chosen by the one Spring profile that names it.
 * <ul>
 * <li>{@code off}: no limiter;</li>
 * <li>{@code memory}: our starter in memory, its headers on (its defaults);</li>
 * <li>{@code redis}: our starter on Redis;</li>
 * <li>{@code redis-reservoir}: our starter on Redis in two-tier mode, 100 permits per
 * fill;</li>
 * <li>{@code resilience4j}: a Resilience4j {@code RateLimiter} per API key, from the
 * registry of {@code resilience4j-spring-boot4}, asked by a
 * {@code HandlerInterceptor};</li>
 * <li>{@code bucket4j-memory} and {@code bucket4j-redis}: the servlet filter of
 * {@code bucket4j-spring-boot-starter}, its buckets in a Caffeine JCache cache or in
 * Redis through Jedis.</li>
 * </ul>
 * The tiers' limits are set once, under {@code peers.tiers}, and every variant reads them
 * from there; {@code rate-limit-benchmarks/run.sh} raises them so that every request is
 * allowed, and measures the variants side by side. Every other limiter of the jar is
 * switched off by property or profile, so only the variant's acts.
 */
@NullMarked
package dev.ratelimit.peers;

import org.jspecify.annotations.NullMarked;
