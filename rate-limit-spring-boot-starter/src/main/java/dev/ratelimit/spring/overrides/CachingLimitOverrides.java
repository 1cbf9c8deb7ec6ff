package dev.ratelimit.spring.overrides;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.jspecify.annotations.Nullable;

/**
 * Caches the answers of an application's own {@link LimitOverrides}, so that a decision
 * does not query a database: at most {@code maxEntries} clients, each answer (also
 * "none") for at most {@code timeToLive}. Changes made through this object apply here at
 * once; changes made elsewhere apply within the time to live.
 */
public final class CachingLimitOverrides implements LimitOverrides {

	private final LimitOverrides delegate;

	private final Cache<ClientKey, Optional<LimitOverride>> answers;

	/**
	 * Creates the cache.
	 * @param delegate the store whose answers to cache
	 * @param maxEntries the most clients whose answers are kept
	 * @param timeToLive how long an answer is kept
	 * @param nanoTime the clock of the time to live, such as {@code System::nanoTime}
	 */
	public CachingLimitOverrides(LimitOverrides delegate, long maxEntries, Duration timeToLive, LongSupplier nanoTime) {
		this.delegate = Objects.requireNonNull(delegate, "delegate must not be null");
		this.answers = Caffeine.newBuilder()
			.maximumSize(maxEntries)
			.expireAfterWrite(timeToLive)
			.ticker(nanoTime::getAsLong)
			.executor(Runnable::run)
			.build();
	}

	@Override
	public @Nullable LimitOverride find(String policy, String client) {
		return this.answers
			.get(new ClientKey(policy, client),
					(key) -> Optional.ofNullable(this.delegate.find(key.policy(), key.client())))
			.orElse(null);
	}

	@Override
	public List<LimitOverride> list() {
		return this.delegate.list();
	}

	@Override
	public void put(LimitOverride override) {
		this.delegate.put(override);
		this.answers.invalidate(new ClientKey(override.policy(), override.client()));
	}

	@Override
	public boolean remove(String policy, String client) {
		boolean removed = this.delegate.remove(policy, client);
		this.answers.invalidate(new ClientKey(policy, client));
		return removed;
	}

	@Override
	public boolean mayOverride(String policy) {
		return this.delegate.mayOverride(policy);
	}

	/**
	 * Returns the store whose answers are cached.
	 * @return the store
	 */
	public LimitOverrides delegate() {
		return this.delegate;
	}

	private record ClientKey(String policy, String client) {

	}

}
