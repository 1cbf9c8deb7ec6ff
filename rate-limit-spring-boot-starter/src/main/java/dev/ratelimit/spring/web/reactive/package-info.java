/**
 * The reactive (WebFlux) stack: the request as the decision path reads it, the
 * {@code WebFilter} that applies {@code ratelimit.filters}, the support that lets
 * {@code @RateLimited} methods returning {@code Mono} or {@code Flux} decide on
 * subscription, and the answer to a rejected call. Nothing here blocks a thread: the
 * limiter is asked through its asynchronous calls.
 */
@NullMarked
package dev.ratelimit.spring.web.reactive;

import org.jspecify.annotations.NullMarked;
