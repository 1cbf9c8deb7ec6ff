package dev.ratelimit.core;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One limit: an algorithm and its parameters, immutable, made by {@link #tokenBucket} and
 * the other factories or by {@link #builder(Algorithm)}. Validated on construction so
 * that every value stays below 2<sup>53</sup>: exact in Java longs and in Lua doubles.
 */
public final class Limit {

	/** How long a concurrency lease lives unless released, by default. */
	public static final Duration DEFAULT_LEASE_TIME = Duration.ofMinutes(1);

	/**
	 * Extra retention for a token bucket that starts below capacity; see
	 * {@link #retentionMicros()}.
	 */
	static final long PARTIAL_START_RETENTION_MICROS = 86_400_000_000L;

	/** The longest sliding-window log a key may hold. */
	public static final long MAX_LOG_PERMITS = 100_000;

	/** The most concurrent permits a key may hold. */
	public static final long MAX_CONCURRENCY = 100_000;

	/** The zone of calendar windows unless one is given. */
	private static final ZoneId UTC = ZoneId.of("UTC");

	private static final long DAY_MICROS = 86_400_000_000L;

	private final Algorithm algorithm;

	private final @Nullable Rate rate;

	private final long capacity;

	private final long initial;

	private final LeakMode mode;

	private final long maxWaitMicros;

	private final long leaseTimeMicros;

	private final WindowAlignment alignment;

	private final ZoneId zone;

	private final long unitsPerMicro;

	private final long unitsPerPermit;

	private final long penaltyMicros;

	private final int hash;

	private Limit(Builder builder) {
		this.algorithm = builder.algorithm;
		String what = builder.algorithm.configName() + " limit";
		this.alignment = (builder.alignment != null) ? builder.alignment : WindowAlignment.EPOCH;
		if (this.alignment == WindowAlignment.CALENDAR && builder.algorithm != Algorithm.FIXED_WINDOW) {
			throw new InvalidLimitException(Parameter.ALIGN, this.alignment,
					"'align: calendar' applies to fixed-window limits only, not to a " + what);
		}
		if (builder.zone != null && this.alignment != WindowAlignment.CALENDAR) {
			throw new InvalidLimitException(Parameter.ZONE, builder.zone,
					"'zone' applies to a fixed-window limit with 'align: calendar' only, not to a " + what
							+ ((builder.algorithm == Algorithm.FIXED_WINDOW) ? " aligned to the epoch" : ""));
		}
		this.zone = (builder.zone != null) ? builder.zone : UTC;
		if (builder.algorithm == Algorithm.CONCURRENCY) {
			if (builder.rate != null) {
				throw new InvalidLimitException(Parameter.RATE, builder.rate, "'rate' does not apply to a concurrency "
						+ "limit, which takes 'max' (rate was " + builder.rate + ")");
			}
			if (builder.initial != null) {
				throw new InvalidLimitException(Parameter.INITIAL, builder.initial,
						"'initial' applies to token buckets only, not to a " + what);
			}
			if (builder.capacity == null) {
				throw new InvalidLimitException(Parameter.MAX, null,
						"A concurrency limit needs 'max', the calls in flight per key");
			}
			this.rate = null;
			this.capacity = checkRange(Parameter.MAX, builder.capacity, 1, MAX_CONCURRENCY, what);
			this.leaseTimeMicros = micros(Parameter.LEASE_TIME,
					builder.leaseTime == null ? DEFAULT_LEASE_TIME : builder.leaseTime, what);
			this.initial = this.capacity;
			this.unitsPerMicro = 0;
			this.unitsPerPermit = 0;
		}
		else {
			if (builder.rate == null) {
				throw new InvalidLimitException(Parameter.RATE, null, "A " + what + " needs 'rate', such as 5/1s");
			}
			if (builder.leaseTime != null) {
				throw new InvalidLimitException(Parameter.LEASE_TIME, builder.leaseTime,
						"'lease-time' applies to concurrency limits only, not to a " + what);
			}
			Rate r = builder.rate;
			checkCalendarPeriod(r, this.alignment, builder.algorithm, what);
			this.rate = r;
			this.leaseTimeMicros = 0;
			boolean bucket = builder.algorithm == Algorithm.TOKEN_BUCKET || builder.algorithm == Algorithm.LEAKY_BUCKET;
			if (!bucket && builder.capacity != null && builder.capacity != r.permits()) {
				throw new InvalidLimitException(Parameter.CAPACITY, builder.capacity,
						"'capacity' applies to token and leaky buckets only; a " + what + " allows " + r.permits()
								+ " per window (set by 'rate')");
			}
			long cap = builder.capacity == null ? r.permits() : builder.capacity;
			this.capacity = checkRange(Parameter.CAPACITY, cap, 1, Rate.MAX_EXACT, what);
			long gcd = gcd(r.permits(), r.periodMicros());
			this.unitsPerMicro = r.permits() / gcd;
			this.unitsPerPermit = r.periodMicros() / gcd;
			// each parameter below is valid on its own, and only their combination is
			// not: none is named
			if (bucket && this.capacity > Rate.MAX_EXACT / this.unitsPerPermit) {
				throw new InvalidLimitException(null, null,
						"The " + what + " with rate " + r + " and capacity " + this.capacity
								+ " is too fine-grained to count exactly; lower the capacity or use a rate"
								+ " whose period divides evenly by its permits");
			}
			if (builder.algorithm == Algorithm.SLIDING_WINDOW_COUNTER
					&& r.permits() > Rate.MAX_EXACT / r.periodMicros()) {
				throw new InvalidLimitException(null, null, "The " + what + " with rate " + r
						+ " is too large to weigh exactly (permits x window in microseconds must stay below 2^53);"
						+ " use a shorter window or a token bucket");
			}
			if (builder.algorithm == Algorithm.SLIDING_WINDOW_LOG && r.permits() > MAX_LOG_PERMITS) {
				throw new InvalidLimitException(null, null,
						"The " + what + " with rate " + r + " would keep up to " + r.permits()
								+ " timestamps per key; at most " + MAX_LOG_PERMITS
								+ " are allowed, use a sliding-window-counter instead");
			}
			if (builder.initial != null) {
				if (builder.algorithm != Algorithm.TOKEN_BUCKET) {
					throw new InvalidLimitException(Parameter.INITIAL, builder.initial,
							"'initial' applies to token buckets only, not to a " + what);
				}
				this.initial = checkRange(Parameter.INITIAL, builder.initial, 0, this.capacity, what);
			}
			else {
				this.initial = this.capacity;
			}
		}
		if (builder.mode != null && builder.algorithm != Algorithm.LEAKY_BUCKET) {
			throw new InvalidLimitException(Parameter.MODE, builder.mode,
					"'mode' applies to leaky buckets only, not to a " + what);
		}
		this.mode = builder.mode == null ? LeakMode.POLICE : builder.mode;
		if (builder.maxWait != null) {
			if (this.mode != LeakMode.SHAPE) {
				throw new InvalidLimitException(Parameter.MAX_WAIT, builder.maxWait,
						"'max-wait' applies to a leaky-bucket with mode 'shape' only, not to a " + what
								+ (builder.algorithm == Algorithm.LEAKY_BUCKET ? " in mode police" : ""));
			}
			this.maxWaitMicros = micros(Parameter.MAX_WAIT, builder.maxWait, what);
		}
		else {
			this.maxWaitMicros = -1;
		}
		this.penaltyMicros = (builder.penalty != null) ? micros(Parameter.PENALTY, builder.penalty, what) : 0;
		// Limits are map keys on every decision; hash once.
		this.hash = Objects.hash(this.algorithm, this.rate, this.capacity, this.initial, this.mode, this.maxWaitMicros,
				this.leaseTimeMicros, this.alignment, this.zone, this.penaltyMicros);
	}

	/**
	 * Checks that a period in months is aligned to the calendar, and that a calendar
	 * window is one day, week or month.
	 */
	private static void checkCalendarPeriod(Rate rate, WindowAlignment alignment, Algorithm algorithm, String what) {
		if (alignment == WindowAlignment.CALENDAR) {
			long period = rate.periodMicros();
			if (!(rate.months() == 1 || (rate.months() == 0 && (period == DAY_MICROS || period == 7 * DAY_MICROS)))) {
				throw new InvalidLimitException(Parameter.RATE, rate,
						"A " + what
								+ " with 'align: calendar' counts per calendar day, week or month: its period must be"
								+ " 1d, 1w or 1mo (rate was " + rate + ")");
			}
		}
		else if (rate.months() > 0) {
			throw new InvalidLimitException(Parameter.RATE, rate,
					"A period in months (rate " + rate + ") has no fixed length: it needs a fixed-window limit with"
							+ " 'align: calendar', not a " + what
							+ ((algorithm == Algorithm.FIXED_WINDOW) ? " aligned to the epoch" : ""));
		}
	}

	private static long checkRange(Parameter parameter, long value, long min, long max, String what) {
		if (value < min || value > max) {
			throw new InvalidLimitException(parameter, value, "'" + parameter.configName() + "' of a " + what
					+ " must be between " + min + " and " + max + " (was " + value + ")");
		}
		return value;
	}

	private static long micros(Parameter parameter, Duration duration, String what) {
		String name = parameter.configName();
		if (duration.isNegative() || duration.isZero()) {
			throw new InvalidLimitException(parameter, duration,
					"'" + name + "' of a " + what + " must be positive (was " + duration + ")");
		}
		try {
			long micros = Math.addExact(Math.multiplyExact(duration.getSeconds(), 1_000_000L),
					duration.getNano() / 1000);
			if (micros > Rate.MAX_EXACT) {
				throw new ArithmeticException();
			}
			return Math.max(1, micros);
		}
		catch (ArithmeticException ex) {
			throw new InvalidLimitException(parameter, duration,
					"'" + name + "' of a " + what + " is too long (was " + duration + ")");
		}
	}

	private static long gcd(long a, long b) {
		while (b != 0) {
			long t = a % b;
			a = b;
			b = t;
		}
		return a;
	}

	/**
	 * Starts a limit with the given algorithm.
	 * @param algorithm the algorithm
	 * @return a builder
	 */
	public static Builder builder(Algorithm algorithm) {
		return new Builder(Objects.requireNonNull(algorithm, "algorithm must not be null"));
	}

	/**
	 * Returns a token bucket whose capacity is the rate's permits, starting full.
	 * @param rate the rate, such as {@code 60/1m}
	 * @return the limit
	 */
	public static Limit tokenBucket(String rate) {
		return builder(Algorithm.TOKEN_BUCKET).rate(rate).build();
	}

	/**
	 * Returns a token bucket with the given burst capacity, starting full.
	 * @param rate the refill rate, such as {@code 5/1s}
	 * @param capacity the most tokens the bucket holds
	 * @return the limit
	 */
	public static Limit tokenBucket(String rate, long capacity) {
		return builder(Algorithm.TOKEN_BUCKET).rate(rate).capacity(capacity).build();
	}

	/**
	 * Returns a policing leaky bucket whose depth is the rate's permits.
	 * @param rate the leak rate
	 * @return the limit
	 */
	public static Limit leakyBucket(String rate) {
		return builder(Algorithm.LEAKY_BUCKET).rate(rate).build();
	}

	/**
	 * Returns a fixed window limit.
	 * @param rate permits per window, such as {@code 100/1m}
	 * @return the limit
	 */
	public static Limit fixedWindow(String rate) {
		return builder(Algorithm.FIXED_WINDOW).rate(rate).build();
	}

	/**
	 * Returns a sliding window log limit.
	 * @param rate permits per window
	 * @return the limit
	 */
	public static Limit slidingWindowLog(String rate) {
		return builder(Algorithm.SLIDING_WINDOW_LOG).rate(rate).build();
	}

	/**
	 * Returns a sliding window counter limit.
	 * @param rate permits per window
	 * @return the limit
	 */
	public static Limit slidingWindowCounter(String rate) {
		return builder(Algorithm.SLIDING_WINDOW_COUNTER).rate(rate).build();
	}

	/**
	 * Returns a concurrency limit with the default lease time.
	 * @param max the calls in flight per key
	 * @return the limit
	 */
	public static Limit concurrency(long max) {
		return builder(Algorithm.CONCURRENCY).max(max).build();
	}

	/**
	 * Returns the algorithm.
	 * @return the algorithm
	 */
	public Algorithm algorithm() {
		return this.algorithm;
	}

	/**
	 * Returns the rate, or {@code null} for a concurrency limit.
	 * @return the rate
	 */
	public @Nullable Rate rate() {
		return this.rate;
	}

	/**
	 * Returns the most permits the limit grants at once: a bucket's capacity, a window's
	 * permits, or the calls in flight of a concurrency limit. This is the quota
	 * ({@code q}) of the {@code RateLimit-Policy} header.
	 * @return the capacity
	 */
	public long capacity() {
		return this.capacity;
	}

	/**
	 * Returns the tokens a token bucket holds when a key is first seen.
	 * @return the initial tokens
	 */
	public long initial() {
		return this.initial;
	}

	/**
	 * Returns the leaky-bucket mode ({@link LeakMode#POLICE} for other algorithms).
	 * @return the mode
	 */
	public LeakMode mode() {
		return this.mode;
	}

	/**
	 * Returns the longest delay a shaping leaky bucket imposes, or {@code -1} if only its
	 * depth bounds the delay.
	 * @return the longest delay in microseconds, or -1
	 */
	public long maxWaitMicros() {
		return this.maxWaitMicros;
	}

	/**
	 * Returns how long a concurrency permit lives if it is never released (0 for other
	 * algorithms).
	 * @return the lease time in microseconds
	 */
	public long leaseTimeMicros() {
		return this.leaseTimeMicros;
	}

	/**
	 * Returns where the windows of a fixed-window limit start
	 * ({@link WindowAlignment#EPOCH} for every other algorithm).
	 * @return the alignment
	 */
	public WindowAlignment alignment() {
		return this.alignment;
	}

	/**
	 * Returns the zone whose midnights start the windows of a calendar-aligned limit, UTC
	 * unless one was given (and UTC for every other limit, which no zone affects).
	 * @return the zone
	 */
	public ZoneId zone() {
		return this.zone;
	}

	/**
	 * Returns how long a client key is refused once this limit has rejected it, or 0 for
	 * none. The penalty belongs to the limit's policy and client key: while it lasts,
	 * every call with a limit of that policy and key that carries a penalty is rejected,
	 * whatever the limits say, and consumes nothing. A change of penalty alone changes
	 * nothing of a key's state (no conversion).
	 * @return the penalty in microseconds, or 0
	 */
	public long penaltyMicros() {
		return this.penaltyMicros;
	}

	/**
	 * Returns the refill rate in units per microsecond, where a permit is
	 * {@link #unitsPerPermit()} units. The two are the rate's permits and period divided
	 * by their greatest common divisor, so that refill is continuous and exact.
	 * @return units per microsecond (0 for concurrency)
	 */
	public long unitsPerMicro() {
		return this.unitsPerMicro;
	}

	/**
	 * Returns the units one permit is worth; see {@link #unitsPerMicro()}.
	 * @return units per permit (0 for concurrency)
	 */
	public long unitsPerPermit() {
		return this.unitsPerPermit;
	}

	/**
	 * Returns the time the limit takes to restore its whole capacity from nothing: a
	 * bucket's capacity divided by its rate (rounded up to a microsecond), a window's
	 * length, or a concurrency lease time. This is the window ({@code w}) of the
	 * {@code RateLimit-Policy} header. A calendar window's length varies; this is its
	 * nominal length: 24 hours, 7 days, or java.time's estimated month (see
	 * {@link Rate#months()}).
	 * @return the window in microseconds
	 */
	public long windowMicros() {
		return switch (this.algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET -> ceilDiv(this.capacity * this.unitsPerPermit, this.unitsPerMicro);
			case FIXED_WINDOW, SLIDING_WINDOW_LOG, SLIDING_WINDOW_COUNTER -> requireRate().periodMicros();
			case CONCURRENCY -> this.leaseTimeMicros;
		};
	}

	/**
	 * Returns how long a key's state must be kept after its last use. After that long
	 * without a call, the state is indistinguishable from a fresh one and may be dropped:
	 * a bucket's fill time, a fixed window or log's length, two windows for the sliding
	 * counter, a lease time for concurrency. A token bucket that starts below capacity
	 * ({@link #initial()} &lt; {@link #capacity()}) is distinguishable from a fresh one
	 * for ever once full, so it is kept for one more day after its fill time; a key idle
	 * for longer starts again at {@code initial}. A calendar window is kept a day longer
	 * than its nominal length, which covers its longest (a 31-day month, a day or week
	 * with an extra hour).
	 * @return the retention in microseconds
	 */
	public long retentionMicros() {
		return switch (this.algorithm) {
			case TOKEN_BUCKET -> windowMicros() + (this.initial < this.capacity ? PARTIAL_START_RETENTION_MICROS : 0);
			case FIXED_WINDOW -> windowMicros() + ((this.alignment == WindowAlignment.CALENDAR) ? DAY_MICROS : 0);
			case LEAKY_BUCKET, SLIDING_WINDOW_LOG, CONCURRENCY -> windowMicros();
			case SLIDING_WINDOW_COUNTER -> 2 * windowMicros();
		};
	}

	private Rate requireRate() {
		return Objects.requireNonNull(this.rate, "rate");
	}

	static long ceilDiv(long a, long b) {
		return -Math.floorDiv(-a, b);
	}

	@Override
	public boolean equals(Object other) {
		if (this == other) {
			return true;
		}
		return other instanceof Limit limit && limit.hash == this.hash && limit.algorithm == this.algorithm
				&& Objects.equals(limit.rate, this.rate) && limit.capacity == this.capacity
				&& limit.initial == this.initial && limit.mode == this.mode && limit.maxWaitMicros == this.maxWaitMicros
				&& limit.leaseTimeMicros == this.leaseTimeMicros && limit.alignment == this.alignment
				&& limit.zone.equals(this.zone) && limit.penaltyMicros == this.penaltyMicros;
	}

	@Override
	public int hashCode() {
		return this.hash;
	}

	/**
	 * Returns the limit as it would be configured, such as
	 * {@code token-bucket 5/1s capacity=10} or
	 * {@code fixed-window 100000/1mo align=calendar zone=Europe/Paris}.
	 */
	@Override
	public String toString() {
		StringBuilder text = new StringBuilder(this.algorithm.configName());
		if (this.algorithm == Algorithm.CONCURRENCY) {
			text.append(" max=")
				.append(this.capacity)
				.append(" lease-time=")
				.append(Rate.formatMicros(this.leaseTimeMicros));
			return withPenalty(text);
		}
		text.append(' ').append(this.rate);
		if (this.algorithm == Algorithm.TOKEN_BUCKET || this.algorithm == Algorithm.LEAKY_BUCKET) {
			text.append(" capacity=").append(this.capacity);
		}
		if (this.initial != this.capacity) {
			text.append(" initial=").append(this.initial);
		}
		if (this.alignment == WindowAlignment.CALENDAR) {
			text.append(" align=").append(this.alignment).append(" zone=").append(this.zone.getId());
		}
		if (this.algorithm == Algorithm.LEAKY_BUCKET) {
			text.append(" mode=").append(this.mode);
			if (this.maxWaitMicros >= 0) {
				text.append(" max-wait=").append(Rate.formatMicros(this.maxWaitMicros));
			}
		}
		return withPenalty(text);
	}

	private String withPenalty(StringBuilder text) {
		if (this.penaltyMicros > 0) {
			text.append(" penalty=").append(Rate.formatMicros(this.penaltyMicros));
		}
		return text.toString();
	}

	/**
	 * Builds a {@link Limit}; every value is checked when {@link #build()} is called.
	 */
	public static final class Builder {

		private final Algorithm algorithm;

		private @Nullable Rate rate;

		private @Nullable Long capacity;

		private @Nullable Long initial;

		private @Nullable LeakMode mode;

		private @Nullable Duration maxWait;

		private @Nullable Duration leaseTime;

		private @Nullable WindowAlignment alignment;

		private @Nullable ZoneId zone;

		private @Nullable Duration penalty;

		private Builder(Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		/**
		 * Sets the rate.
		 * @param rate the rate, such as {@code 5/1s}
		 * @return this builder
		 * @throws InvalidLimitException for {@link Parameter#RATE} if the rate does not
		 * parse
		 */
		public Builder rate(String rate) {
			this.rate = Rate.parse(rate);
			return this;
		}

		/**
		 * Sets the rate.
		 * @param rate the rate
		 * @return this builder
		 */
		public Builder rate(Rate rate) {
			this.rate = Objects.requireNonNull(rate, "rate must not be null");
			return this;
		}

		/**
		 * Sets a token bucket's burst size or a leaky bucket's depth.
		 * @param capacity the capacity
		 * @return this builder
		 */
		public Builder capacity(long capacity) {
			this.capacity = capacity;
			return this;
		}

		/**
		 * Sets a token bucket's tokens at the first sight of a key.
		 * @param initial the initial tokens
		 * @return this builder
		 */
		public Builder initial(long initial) {
			this.initial = initial;
			return this;
		}

		/**
		 * Sets a leaky bucket's mode.
		 * @param mode the mode
		 * @return this builder
		 */
		public Builder mode(LeakMode mode) {
			this.mode = Objects.requireNonNull(mode, "mode must not be null");
			return this;
		}

		/**
		 * Sets the longest delay of a shaping leaky bucket.
		 * @param maxWait the longest delay
		 * @return this builder
		 */
		public Builder maxWait(Duration maxWait) {
			this.maxWait = Objects.requireNonNull(maxWait, "maxWait must not be null");
			return this;
		}

		/**
		 * Sets a concurrency limit's calls in flight per key.
		 * @param max the most calls in flight
		 * @return this builder
		 */
		public Builder max(long max) {
			this.capacity = max;
			return this;
		}

		/**
		 * Sets how long a concurrency permit lives if never released.
		 * @param leaseTime the lease time
		 * @return this builder
		 */
		public Builder leaseTime(Duration leaseTime) {
			this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime must not be null");
			return this;
		}

		/**
		 * Sets where a fixed window's windows start; {@link WindowAlignment#CALENDAR}
		 * takes a rate of {@code 1d}, {@code 1w} or {@code 1mo} and a {@link #zone}.
		 * @param alignment the alignment
		 * @return this builder
		 */
		public Builder align(WindowAlignment alignment) {
			this.alignment = Objects.requireNonNull(alignment, "alignment must not be null");
			return this;
		}

		/**
		 * Sets the zone whose midnights start a calendar window; UTC if not set.
		 * @param zone the zone
		 * @return this builder
		 */
		public Builder zone(ZoneId zone) {
			this.zone = Objects.requireNonNull(zone, "zone must not be null");
			return this;
		}

		/**
		 * Sets the zone whose midnights start a calendar window, by its id.
		 * @param zone the zone's id, such as {@code Europe/Paris} or {@code +01:00}
		 * @return this builder
		 * @throws InvalidLimitException for {@link Parameter#ZONE} if no zone has that id
		 */
		public Builder zone(String zone) {
			Objects.requireNonNull(zone, "zone must not be null");
			try {
				this.zone = ZoneId.of(zone.trim());
			}
			catch (DateTimeException ex) {
				throw new InvalidLimitException(Parameter.ZONE, zone, "Unknown time zone '" + zone
						+ "'; use a region such as Europe/Paris or UTC, or an offset such as +01:00");
			}
			return this;
		}

		/**
		 * Sets how long a client key is refused once this limit has rejected it; see
		 * {@link Limit#penaltyMicros()}. Every limit of a policy carries the policy's
		 * penalty.
		 * @param penalty the penalty, positive
		 * @return this builder
		 */
		public Builder penalty(Duration penalty) {
			this.penalty = Objects.requireNonNull(penalty, "penalty must not be null");
			return this;
		}

		/**
		 * Checks every value and builds the limit.
		 * @return the limit
		 * @throws InvalidLimitException naming the parameter whose value is wrong
		 */
		public Limit build() {
			return new Limit(this);
		}

	}

	/**
	 * The parameters of a limit, each with the name that configuration gives it.
	 */
	public enum Parameter {

		/** The algorithm, such as {@code token-bucket}. */
		ALGORITHM("algorithm"),

		/** The rate, such as {@code 5/1s}. */
		RATE("rate"),

		/** A token bucket's burst size or a leaky bucket's depth. */
		CAPACITY("capacity"),

		/** A token bucket's tokens at the first sight of a key. */
		INITIAL("initial"),

		/** A leaky bucket's mode, {@code police} or {@code shape}. */
		MODE("mode"),

		/** The longest delay of a shaping leaky bucket. */
		MAX_WAIT("max-wait"),

		/** A concurrency limit's calls in flight per key. */
		MAX("max"),

		/** How long a concurrency permit lives if never released. */
		LEASE_TIME("lease-time"),

		/** Where a fixed window's windows start, {@code epoch} or {@code calendar}. */
		ALIGN("align"),

		/** The zone of a calendar window, such as {@code Europe/Paris}. */
		ZONE("zone"),

		/** How long a client key is refused once the limit has rejected it. */
		PENALTY("penalty");

		private final String configName;

		Parameter(String configName) {
			this.configName = configName;
		}

		/**
		 * Returns the name of this parameter in configuration, such as {@code max-wait}.
		 * @return the configuration name
		 */
		public String configName() {
			return this.configName;
		}

		@Override
		public String toString() {
			return this.configName;
		}

	}

}
