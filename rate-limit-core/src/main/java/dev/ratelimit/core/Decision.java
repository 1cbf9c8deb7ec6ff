package dev.ratelimit.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The answer of a {@link RateLimiter} for one call, immutable: allowed only if every
 * limit allows it. The summary accessors ({@link #remaining()}, {@link #limit()},
 * {@link #resetAfter()}) describe the <em>deciding</em> limit: the one that rejected (the
 * longest wait) or, for an allowed call, the one closest to rejection.
 */
public final class Decision {

	/**
	 * Where a decision came from.
	 */
	public enum Source {

		/** The configured backend decided. */
		BACKEND,

		/** The backend failed and the failure policy allowed the call. */
		FAILED_OPEN,

		/** The backend failed and the failure policy rejected the call. */
		FAILED_CLOSED,

		/** The backend failed and local in-memory limits decided instead. */
		LOCAL_FALLBACK

	}

	private static final Decision UNLIMITED = new Decision(true, List.of(), -1, List.of(), Source.BACKEND, 0, null);

	private final boolean allowed;

	/**
	 * The statuses, or {@code null} for a decision on one limit, which keeps its status
	 * in {@link #only}.
	 */
	private final @Nullable List<LimitStatus> statuses;

	private final @Nullable LimitStatus only;

	private final int deciding;

	private final List<Lease> leases;

	private final Source source;

	private final long retryAfterMicros;

	/** The mark of the one status of a decision on one limit. */
	private final long onlyMark;

	/** The marks of the statuses, by index; {@code null} when every mark is 0. */
	private final long @Nullable [] marks;

	private Decision(boolean allowed, List<LimitStatus> statuses, int deciding, List<Lease> leases, Source source,
			long retryAfterMicros, long @Nullable [] marks) {
		this.allowed = allowed;
		this.statuses = statuses;
		this.only = null;
		this.deciding = deciding;
		this.leases = leases;
		this.source = source;
		this.retryAfterMicros = retryAfterMicros;
		this.onlyMark = 0;
		this.marks = marks;
	}

	/**
	 * Returns the decision for a call that no limit applies to.
	 * @return an allowed decision without statuses
	 */
	public static Decision unlimited() {
		return UNLIMITED;
	}

	private Decision(LimitStatus only, long mark) {
		this.allowed = only.allowed();
		this.statuses = null;
		this.only = only;
		this.deciding = 0;
		this.leases = List.of();
		this.source = Source.BACKEND;
		this.retryAfterMicros = this.allowed ? 0 : Math.max(0, only.retryAfterMicros());
		this.onlyMark = mark;
		this.marks = null;
	}

	/**
	 * Returns the decision made by a backend on a call with one limit and no leases, as
	 * {@code of(List.of(status), List.of())} does, without a list.
	 * @param status the status of the limit
	 * @return the decision
	 */
	public static Decision of(LimitStatus status) {
		return new Decision(Objects.requireNonNull(status, "status must not be null"), 0);
	}

	/**
	 * Returns the decision made by a backend on a call with one limit and no leases, with
	 * the {@linkplain #mark(int) mark} its refund needs.
	 * @param status the status of the limit
	 * @param mark what the backend needs to give the call's permits back
	 * @return the decision
	 */
	public static Decision of(LimitStatus status, long mark) {
		return new Decision(Objects.requireNonNull(status, "status must not be null"), mark);
	}

	/**
	 * Returns the decision made by a backend from each limit's status.
	 * @param statuses the statuses, one per limit, in the order the limits were given
	 * @param leases the concurrency permits the call holds if allowed
	 * @return the decision
	 */
	public static Decision of(List<LimitStatus> statuses, List<Lease> leases) {
		return of(statuses, leases, Source.BACKEND);
	}

	/**
	 * Returns a decision from each limit's status.
	 * @param statuses the statuses, one per limit
	 * @param leases the concurrency permits the call holds if allowed
	 * @param source where the decision came from
	 * @return the decision
	 */
	public static Decision of(List<LimitStatus> statuses, List<Lease> leases, Source source) {
		return of(statuses, leases, source, null);
	}

	/**
	 * Returns a decision from each limit's status, with the {@linkplain #mark(int) marks}
	 * a refund of the call's permits needs.
	 * @param statuses the statuses, one per limit
	 * @param leases the concurrency permits the call holds if allowed
	 * @param source where the decision came from
	 * @param marks one per status, or {@code null} when all are 0
	 * @return the decision
	 * @throws IllegalArgumentException if there are marks but not one per status
	 */
	public static Decision of(List<LimitStatus> statuses, List<Lease> leases, Source source, long @Nullable [] marks) {
		if (marks != null && marks.length != statuses.size()) {
			throw new IllegalArgumentException(
					"marks must be one per status (" + marks.length + " for " + statuses.size() + ")");
		}
		long[] kept = (marks != null && !allZero(marks)) ? marks.clone() : null;
		if (statuses.isEmpty()) {
			return (source == Source.BACKEND) ? UNLIMITED
					: new Decision(true, List.of(), -1, List.of(), source, 0, null);
		}
		if (statuses.size() == 1) {
			// Most calls name one limit: it decides, and an immutable list needs no copy.
			LimitStatus only = statuses.get(0);
			boolean allowed = only.allowed();
			return new Decision(allowed, List.copyOf(statuses), 0, allowed ? List.copyOf(leases) : List.of(), source,
					allowed ? 0 : Math.max(0, only.retryAfterMicros()), kept);
		}
		boolean allowed = true;
		long retryAfter = 0;
		for (LimitStatus status : statuses) {
			allowed &= status.allowed();
			retryAfter = Math.max(retryAfter, status.retryAfterMicros());
		}
		int deciding = -1;
		for (int i = 0; i < statuses.size(); i++) {
			LimitStatus candidate = statuses.get(i);
			if (deciding < 0) {
				if (allowed || !candidate.allowed()) {
					deciding = i;
				}
				continue;
			}
			LimitStatus best = statuses.get(deciding);
			if (allowed ? closerToRejection(candidate, best) : decidesRejection(candidate, best)) {
				deciding = i;
			}
		}
		return new Decision(allowed, List.copyOf(statuses), deciding, allowed ? List.copyOf(leases) : List.of(), source,
				allowed ? 0 : retryAfter, kept);
	}

	private static boolean allZero(long[] marks) {
		for (long mark : marks) {
			if (mark != 0) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns a decision made without the backend, which failed: the call is allowed
	 * ({@link Source#FAILED_OPEN}) or rejected ({@link Source#FAILED_CLOSED}) without any
	 * limit's status.
	 * @param allowed whether the call is allowed
	 * @param retryAfterMicros for a rejected call, when to try again
	 * @return the decision
	 */
	public static Decision unavailable(boolean allowed, long retryAfterMicros) {
		return new Decision(allowed, List.of(), -1, List.of(), allowed ? Source.FAILED_OPEN : Source.FAILED_CLOSED,
				allowed ? 0 : Math.max(0, retryAfterMicros), null);
	}

	private static boolean closerToRejection(LimitStatus candidate, LimitStatus best) {
		if (candidate.remaining() != best.remaining()) {
			return candidate.remaining() < best.remaining();
		}
		return candidate.resetAfterMicros() > best.resetAfterMicros();
	}

	private static boolean decidesRejection(LimitStatus candidate, LimitStatus best) {
		if (candidate.allowed()) {
			return false;
		}
		if (candidate.exceedsCapacity() != best.exceedsCapacity()) {
			return candidate.exceedsCapacity();
		}
		return candidate.retryAfterMicros() > best.retryAfterMicros();
	}

	/**
	 * Returns whether the call may proceed.
	 * @return whether every limit allowed the call
	 */
	public boolean isAllowed() {
		return this.allowed;
	}

	/**
	 * Returns where this decision came from.
	 * @return the source
	 */
	public Source source() {
		return this.source;
	}

	/**
	 * Returns each limit's status, in the order the limits were given (empty when the
	 * backend was unavailable).
	 * @return the statuses
	 */
	public List<LimitStatus> statuses() {
		return (this.statuses != null) ? this.statuses : List.of(Objects.requireNonNull(this.only));
	}

	/**
	 * Returns the status of the deciding limit, or {@code null} when there is none.
	 * @return the deciding status
	 */
	public @Nullable LimitStatus decidingStatus() {
		if (this.only != null) {
			return this.only;
		}
		return (this.deciding < 0) ? null : Objects.requireNonNull(this.statuses).get(this.deciding);
	}

	/**
	 * Returns the statuses of the limits that rejected the call.
	 * @return the rejecting statuses, empty when allowed
	 */
	public List<LimitStatus> rejectedBy() {
		if (this.allowed) {
			return List.of();
		}
		return statuses().stream().filter((status) -> !status.allowed()).toList();
	}

	/**
	 * Returns the permits the deciding limit has left after this call.
	 * @return the remaining permits, or -1 without a deciding limit
	 */
	public long remaining() {
		LimitStatus status = decidingStatus();
		return (status != null) ? status.remaining() : -1;
	}

	/**
	 * Returns the capacity of the deciding limit.
	 * @return the capacity, or -1 without a deciding limit
	 */
	public long limit() {
		LimitStatus status = decidingStatus();
		return (status != null) ? status.limit() : -1;
	}

	/**
	 * Returns, for a rejected call, how long to wait until the same call would pass with
	 * no other calls in between: the longest wait of any limit. Zero for an allowed call
	 * and for a call that can never pass.
	 * @return the wait
	 */
	public Duration retryAfter() {
		return Duration.ofNanos(this.retryAfterMicros * 1000);
	}

	/**
	 * Returns {@link #retryAfter()} in microseconds.
	 * @return the wait in microseconds
	 */
	public long retryAfterMicros() {
		return this.retryAfterMicros;
	}

	/**
	 * Returns the wait until the deciding limit is back to full capacity.
	 * @return the wait
	 */
	public Duration resetAfter() {
		LimitStatus status = decidingStatus();
		return (status != null) ? status.resetAfter() : Duration.ZERO;
	}

	/**
	 * Returns how long an allowed call must wait for its turn before it proceeds (shaping
	 * leaky buckets).
	 * @return the delay, zero for most calls
	 */
	public Duration delay() {
		long delay = 0;
		if (this.allowed) {
			for (LimitStatus status : statuses()) {
				delay = Math.max(delay, status.delayMicros());
			}
		}
		return Duration.ofNanos(delay * 1000);
	}

	/**
	 * Returns whether the call costs more than some limit can ever grant, so that
	 * retrying never helps.
	 * @return whether the call can never pass
	 */
	public boolean exceedsCapacity() {
		for (LimitStatus status : statuses()) {
			if (status.exceedsCapacity()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether the call was rejected because a penalty is running for a policy and
	 * client key of one of its limits ({@link LimitStatus#penalized()}), rather than
	 * (only) by what the limits say.
	 * @return whether a penalty rejected the call
	 */
	public boolean isPenalized() {
		if (this.allowed) {
			return false;
		}
		for (LimitStatus status : statuses()) {
			if (status.penalized()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the mark of a status: what the limiter that made this decision needs to
	 * give the call's permits back ({@link RateLimiter#refund}), such as the start of the
	 * window that counts them. For limiter implementations; its meaning is the limiter's.
	 * @param index the index of the status in {@link #statuses()}
	 * @return the mark, 0 when none was recorded
	 */
	public long mark(int index) {
		if (this.only != null) {
			Objects.checkIndex(index, 1);
			return this.onlyMark;
		}
		Objects.checkIndex(index, statuses().size());
		return (this.marks != null) ? this.marks[index] : 0;
	}

	/**
	 * Returns this decision as coming from another source, with the same statuses, leases
	 * and marks: a failure policy's local limits decided it, say.
	 * @param source where the decision came from
	 * @return the decision
	 */
	public Decision from(Source source) {
		if (source == this.source) {
			return this;
		}
		long[] marks = (this.only != null) ? new long[] { this.onlyMark } : this.marks;
		return of(statuses(), this.leases, source, marks);
	}

	/**
	 * Returns the concurrency permits an allowed call holds until released.
	 * @return the leases
	 */
	public List<Lease> leases() {
		return this.leases;
	}

	@Override
	public String toString() {
		return "Decision[" + (this.allowed ? "allowed" : "rejected") + ", source=" + this.source + ", remaining="
				+ remaining() + ", retryAfterMicros=" + this.retryAfterMicros + ", statuses=" + statuses() + "]";
	}

}
