package dev.ratelimit.core.memory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Lease;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.algorithm.LimitAlgorithm;
import dev.ratelimit.core.algorithm.Outcome;

import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} that keeps every key's state in this JVM.
 *
 * <p>
 * State lives in a bounded Caffeine cache: at most {@code maxKeys} keyed limits are held, the least valuable evicted
 * first (Caffeine's size policy favours keys in recent, frequent use), and each is dropped once it has been idle for
 * its limit's {@link dev.ratelimit.core.Limit#retentionMicros() retention}, after which its state would be
 * indistinguishable from a fresh one. Each keyed limit has its own lock, held only for the few arithmetic operations
 * of a decision; a call with several limits takes their locks in a global order, so that all its limits are decided
 * together without deadlock and without a global lock.
 */
public final class InMemoryRateLimiter implements RateLimiter {

	/** The default bound on tracked keys. */
	public static final long DEFAULT_MAX_KEYS = 1_000_000;

	private static final Comparator<Slot> LOCK_ORDER = Comparator.comparingLong((slot) -> slot.order);

	private final Cache<KeyedLimit, Slot> slots;

	private final TimeSource timeSource;

	private final AtomicLong slotSequence = new AtomicLong();

	private InMemoryRateLimiter(Builder builder) {
		this.timeSource = builder.timeSource;
		this.slots = Caffeine.newBuilder()
			.maximumSize(builder.maxKeys)
			.expireAfter(new RetentionExpiry())
			.ticker(() -> this.timeSource.nowMicros() * 1000)
			.executor(Runnable::run)
			.build();
	}

	/**
	 * Starts a limiter with the system time source and {@link #DEFAULT_MAX_KEYS}.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public Decision acquire(List<KeyedLimit> limits, long cost) {
		if (cost < 0) {
			throw new IllegalArgumentException("cost must be at least 0 (was " + cost + ")");
		}
		int count = limits.size();
		if (count == 0) {
			return Decision.unlimited();
		}
		if (count == 1) {
			KeyedLimit target = limits.get(0);
			Slot slot = slot(target);
			synchronized (slot) {
				long now = this.timeSource.nowMicros();
				Outcome outcome = slot.evaluate(target, now, cost);
				String leaseId = outcome.allowed() ? slot.apply(target, now, cost) : null;
				List<Lease> leases = (leaseId != null) ? List.of(new Lease(target, leaseId, cost)) : List.of();
				return Decision.of(List.of(LimitStatus.of(target, outcome)), leases);
			}
		}
		Slot[] held = new Slot[count];
		for (int i = 0; i < count; i++) {
			held[i] = slot(limits.get(i));
		}
		Slot[] ordered = held.clone();
		Arrays.sort(ordered, LOCK_ORDER);
		return decideLocked(ordered, 0, limits, held, cost);
	}

	private Decision decideLocked(Slot[] ordered, int index, List<KeyedLimit> limits, Slot[] held, long cost) {
		if (index < ordered.length) {
			synchronized (ordered[index]) {
				return decideLocked(ordered, index + 1, limits, held, cost);
			}
		}
		long now = this.timeSource.nowMicros();
		List<LimitStatus> statuses = new ArrayList<>(held.length);
		boolean allowed = true;
		for (int i = 0; i < held.length; i++) {
			Outcome outcome = held[i].evaluate(limits.get(i), now, cost);
			allowed &= outcome.allowed();
			statuses.add(LimitStatus.of(limits.get(i), outcome));
		}
		List<Lease> leases = new ArrayList<>(0);
		if (allowed) {
			for (int i = 0; i < held.length; i++) {
				if (firstOccurrence(held, i)) {
					String leaseId = held[i].apply(limits.get(i), now, cost);
					if (leaseId != null) {
						leases.add(new Lease(limits.get(i), leaseId, cost));
					}
				}
			}
		}
		return Decision.of(statuses, leases);
	}

	private static boolean firstOccurrence(Slot[] held, int index) {
		for (int i = 0; i < index; i++) {
			if (held[i] == held[index]) {
				return false;
			}
		}
		return true;
	}

	@Override
	public List<LimitStatus> inspect(List<KeyedLimit> limits) {
		List<LimitStatus> statuses = new ArrayList<>(limits.size());
		for (KeyedLimit target : limits) {
			Slot slot = this.slots.getIfPresent(target);
			long now = this.timeSource.nowMicros();
			Outcome outcome;
			if (slot == null) {
				outcome = Slot.evaluateFresh(target, now);
			}
			else {
				synchronized (slot) {
					outcome = slot.evaluate(target, now, 0);
				}
			}
			statuses.add(LimitStatus.of(target, outcome));
		}
		return statuses;
	}

	@Override
	public void release(Decision decision) {
		for (Lease lease : decision.leases()) {
			Slot slot = this.slots.getIfPresent(lease.target());
			if (slot != null) {
				synchronized (slot) {
					slot.release(lease.target(), lease.id(), this.timeSource.nowMicros());
				}
			}
		}
	}

	@Override
	public void reset(KeyedLimit limit) {
		this.slots.invalidate(limit);
	}

	/**
	 * Returns the number of keyed limits held, as Caffeine estimates it.
	 * @return the keys held
	 */
	public long keyCount() {
		return this.slots.estimatedSize();
	}

	/**
	 * Performs pending evictions and expirations now, as Caffeine's {@code cleanUp}.
	 */
	public void cleanUp() {
		this.slots.cleanUp();
	}

	private Slot slot(KeyedLimit target) {
		return this.slots.get(target, (key) -> new Slot(this.slotSequence.incrementAndGet()));
	}

	/**
	 * The state of one keyed limit and the lock that guards it.
	 */
	static final class Slot {

		final long order;

		@Nullable Object state;

		Slot(long order) {
			this.order = order;
		}

		@SuppressWarnings("unchecked")
		private static <S> LimitAlgorithm<S> algorithm(KeyedLimit target) {
			return (LimitAlgorithm<S>) LimitAlgorithm.of(target.limit());
		}

		static Outcome evaluateFresh(KeyedLimit target, long now) {
			LimitAlgorithm<Object> algorithm = algorithm(target);
			return algorithm.evaluate(target.limit(), algorithm.fresh(target.limit(), now), now, 0);
		}

		Outcome evaluate(KeyedLimit target, long now, long cost) {
			LimitAlgorithm<Object> algorithm = algorithm(target);
			Object current = this.state;
			if (current == null) {
				current = algorithm.fresh(target.limit(), now);
				this.state = current;
			}
			return algorithm.evaluate(target.limit(), current, now, cost);
		}

		@Nullable String apply(KeyedLimit target, long now, long cost) {
			LimitAlgorithm<Object> algorithm = algorithm(target);
			return algorithm.apply(target.limit(), Objects.requireNonNull(this.state), now, cost);
		}

		void release(KeyedLimit target, String leaseId, long now) {
			Object current = this.state;
			if (current != null) {
				LimitAlgorithm<Object> algorithm = algorithm(target);
				algorithm.release(target.limit(), current, leaseId, now);
			}
		}

	}

	/**
	 * Keeps each keyed limit for its limit's retention after its last use.
	 */
	private static final class RetentionExpiry implements Expiry<KeyedLimit, Slot> {

		private static long retentionNanos(KeyedLimit key) {
			long micros = key.limit().retentionMicros();
			return (micros > Long.MAX_VALUE / 1000) ? Long.MAX_VALUE : micros * 1000;
		}

		@Override
		public long expireAfterCreate(KeyedLimit key, Slot value, long currentTime) {
			return retentionNanos(key);
		}

		@Override
		public long expireAfterUpdate(KeyedLimit key, Slot value, long currentTime, long currentDuration) {
			return retentionNanos(key);
		}

		@Override
		public long expireAfterRead(KeyedLimit key, Slot value, long currentTime, long currentDuration) {
			return retentionNanos(key);
		}

	}

	/**
	 * Builds an {@link InMemoryRateLimiter}.
	 */
	public static final class Builder {

		private long maxKeys = DEFAULT_MAX_KEYS;

		private TimeSource timeSource = TimeSource.system();

		private Builder() {
		}

		/**
		 * Sets the bound on keyed limits held.
		 * @param maxKeys the bound, at least 1
		 * @return this builder
		 */
		public Builder maxKeys(long maxKeys) {
			if (maxKeys < 1) {
				throw new IllegalArgumentException("maxKeys must be at least 1 (was " + maxKeys + ")");
			}
			this.maxKeys = maxKeys;
			return this;
		}

		/**
		 * Sets the clock.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
			return this;
		}

		/**
		 * Builds the limiter.
		 * @return the limiter
		 */
		public InMemoryRateLimiter build() {
			return new InMemoryRateLimiter(this);
		}

	}

}
