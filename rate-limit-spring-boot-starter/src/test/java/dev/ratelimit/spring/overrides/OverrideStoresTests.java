package dev.ratelimit.spring.overrides;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Limit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory store, and the cache in front of an application's own store: answers kept
 * for their time to live and within their bound, and changes made through the cache seen
 * at once.
 */
class OverrideStoresTests {

	private static final LimitOverride BIG = new LimitOverride("api", "big", List.of(Limit.tokenBucket("50/1h")), null);

	@Test
	void theInMemoryStoreFindsListsAndRemovesAndKnowsWhichPoliciesHaveAny() {
		InMemoryLimitOverrides store = new InMemoryLimitOverrides();
		assertThat(store.mayOverride("api")).isFalse();
		store.put(BIG);
		assertThat(store.find("api", "big")).isEqualTo(BIG);
		assertThat(store.find("api", "small")).isNull();
		assertThat(store.find("other", "big")).isNull();
		assertThat(store.mayOverride("api")).isTrue();
		assertThat(store.list()).containsExactly(BIG);
		assertThat(store.remove("api", "small")).isFalse();
		assertThat(store.remove("api", "big")).isTrue();
		assertThat(store.mayOverride("api")).isFalse();
		assertThat(store.list()).isEmpty();
	}

	@Test
	void theCacheAsksTheStoreOncePerClientUntilTheAnswerExpires() {
		CountingStore store = new CountingStore();
		store.put(BIG);
		AtomicLong nanos = new AtomicLong();
		CachingLimitOverrides cache = new CachingLimitOverrides(store, 100, Duration.ofSeconds(10), nanos::get);

		for (int i = 0; i < 5; i++) {
			assertThat(cache.find("api", "big")).isEqualTo(BIG);
			assertThat(cache.find("api", "nobody")).isNull();
		}
		assertThat(store.finds.get()).isEqualTo(2);

		// changed elsewhere: seen once the answer expires
		store.remove("api", "big");
		assertThat(cache.find("api", "big")).isEqualTo(BIG);
		nanos.addAndGet(Duration.ofSeconds(10).toNanos());
		assertThat(cache.find("api", "big")).isNull();
	}

	@Test
	void changesMadeThroughTheCacheApplyAtOnce() {
		CountingStore store = new CountingStore();
		CachingLimitOverrides cache = new CachingLimitOverrides(store, 100, Duration.ofHours(1), () -> 0L);
		assertThat(cache.find("api", "big")).isNull();
		cache.put(BIG);
		assertThat(cache.find("api", "big")).isEqualTo(BIG);
		cache.remove("api", "big");
		assertThat(cache.find("api", "big")).isNull();
	}

	@Test
	void theCacheHoldsAtMostItsBound() {
		CountingStore store = new CountingStore();
		CachingLimitOverrides cache = new CachingLimitOverrides(store, 10, Duration.ofHours(1), () -> 0L);
		for (int i = 0; i < 1000; i++) {
			cache.find("api", "client-" + i);
		}
		int before = store.finds.get();
		for (int i = 0; i < 1000; i++) {
			cache.find("api", "client-" + i);
		}
		// at most 10 of the 1000 answers were kept
		assertThat(store.finds.get() - before).isGreaterThanOrEqualTo(990);
	}

	private static final class CountingStore implements LimitOverrides {

		private final InMemoryLimitOverrides delegate = new InMemoryLimitOverrides();

		private final AtomicInteger finds = new AtomicInteger();

		@Override
		public @Nullable LimitOverride find(String policy, String client) {
			this.finds.incrementAndGet();
			return this.delegate.find(policy, client);
		}

		@Override
		public List<LimitOverride> list() {
			return new ArrayList<>(this.delegate.list());
		}

		@Override
		public void put(LimitOverride override) {
			this.delegate.put(override);
		}

		@Override
		public boolean remove(String policy, String client) {
			return this.delegate.remove(policy, client);
		}

	}

}
