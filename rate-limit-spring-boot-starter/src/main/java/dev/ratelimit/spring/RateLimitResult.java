package dev.ratelimit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitStatus;

import org.jspecify.annotations.Nullable;

/**
 * What the {@link RateLimitService} decided for one call: the decision of the enforced
 * policies and, if the call was allowed and shadow policies applied, their separate
 * decision. Immutable.
 */
public final class RateLimitResult {

	private static final RateLimitResult UNLIMITED = new RateLimitResult(Decision.unlimited(), null, "", 0, List.of());

	private final Decision decision;

	private final @Nullable Decision shadowDecision;

	private final String tier;

	private final long cost;

	private final long shadowCost;

	private final List<String> policies;

	private final @Nullable ResponseCharge responseCharge;

	/**
	 * Creates a result.
	 * @param decision the decision of the enforced policies
	 * @param shadowDecision the decision of the shadow policies, or {@code null} if none
	 * was made
	 * @param tier the caller's tier
	 * @param cost the permits the call took, from the enforced and the shadow policies
	 * alike
	 * @param policies the names of every policy that applied
	 */
	public RateLimitResult(Decision decision, @Nullable Decision shadowDecision, String tier, long cost,
			List<String> policies) {
		this(decision, shadowDecision, tier, cost, cost, policies);
	}

	/**
	 * Creates a result.
	 * @param decision the decision of the enforced policies
	 * @param shadowDecision the decision of the shadow policies, or {@code null} if none
	 * was made
	 * @param tier the caller's tier
	 * @param cost the permits the call took from the enforced policies
	 * @param shadowCost the permits the call took from the shadow policies
	 * @param policies the names of every policy that applied
	 */
	public RateLimitResult(Decision decision, @Nullable Decision shadowDecision, String tier, long cost,
			long shadowCost, List<String> policies) {
		this(decision, shadowDecision, tier, cost, shadowCost, policies, null);
	}

	RateLimitResult(Decision decision, @Nullable Decision shadowDecision, String tier, long cost, long shadowCost,
			List<String> policies, @Nullable ResponseCharge responseCharge) {
		this.decision = Objects.requireNonNull(decision, "decision must not be null");
		this.shadowDecision = shadowDecision;
		this.tier = tier;
		this.cost = cost;
		this.shadowCost = shadowCost;
		this.policies = List.copyOf(policies);
		this.responseCharge = responseCharge;
	}

	/**
	 * Returns the result of a call that no policy applies to.
	 * @return an allowed result without statuses
	 */
	public static RateLimitResult unlimited() {
		return UNLIMITED;
	}

	/**
	 * Returns whether the call may proceed. Shadow policies never prevent it.
	 * @return whether the enforced decision allowed the call
	 */
	public boolean isAllowed() {
		return this.decision.isAllowed();
	}

	/**
	 * Returns the decision of the enforced policies.
	 * @return the decision
	 */
	public Decision decision() {
		return this.decision;
	}

	/**
	 * Returns the decision of the shadow policies.
	 * @return the decision, or {@code null} if no shadow policy applied or the call was
	 * rejected
	 */
	public @Nullable Decision shadowDecision() {
		return this.shadowDecision;
	}

	/**
	 * Returns whether a shadow policy would have rejected the call.
	 * @return whether the shadow decision rejected
	 */
	public boolean isShadowRejected() {
		return this.shadowDecision != null && !this.shadowDecision.isAllowed();
	}

	/**
	 * Returns the caller's tier.
	 * @return the lower-case tier
	 */
	public String tier() {
		return this.tier;
	}

	/**
	 * Returns the permits the call took from each enforced limit if allowed.
	 * @return the cost
	 */
	public long cost() {
		return this.cost;
	}

	/**
	 * Returns the permits the call took from each shadow limit: the highest cost of all
	 * the filter rules and annotations that applied, which can exceed {@link #cost()},
	 * the highest of those with an enforced policy. The shadow policies of a call are
	 * decided together, at this one cost.
	 * @return the cost of the shadow policies
	 */
	public long shadowCost() {
		return this.shadowCost;
	}

	/**
	 * Returns whether the call owes {@code count-if} policies a charge that depends on
	 * its response: {@link RateLimitService#chargeAfterResponse} then settles it once the
	 * response is known.
	 * @return whether the call is allowed and a {@code count-if} policy applied
	 */
	public boolean chargesAfterResponse() {
		return this.responseCharge != null;
	}

	@Nullable ResponseCharge responseCharge() {
		return this.responseCharge;
	}

	/**
	 * Returns the names of the policies that applied.
	 * @return the policy names
	 */
	public List<String> policies() {
		return this.policies;
	}

	/**
	 * Returns the status of every limit that applied: the enforced ones, then the shadow
	 * ones.
	 * @return the statuses
	 */
	public List<LimitStatus> statuses() {
		if (this.shadowDecision == null || this.shadowDecision.statuses().isEmpty()) {
			return this.decision.statuses();
		}
		List<LimitStatus> all = new ArrayList<>(this.decision.statuses());
		all.addAll(this.shadowDecision.statuses());
		return Collections.unmodifiableList(all);
	}

	/**
	 * Returns the status that the {@code RateLimit} header describes: for a rejected call
	 * the deciding limit, else the limit closest to rejection (fewest permits remaining,
	 * then the longest wait until full), shadow limits included.
	 * @return the status, or {@code null} when no limit applied
	 */
	public @Nullable LimitStatus headlineStatus() {
		if (!this.decision.isAllowed()) {
			return this.decision.decidingStatus();
		}
		LimitStatus closest = null;
		for (LimitStatus status : statuses()) {
			if (closest == null || closerToRejection(status, closest)) {
				closest = status;
			}
		}
		return closest;
	}

	private static boolean closerToRejection(LimitStatus candidate, LimitStatus best) {
		if (candidate.allowed() != best.allowed()) {
			return !candidate.allowed();
		}
		if (candidate.remaining() != best.remaining()) {
			return candidate.remaining() < best.remaining();
		}
		return candidate.resetAfterMicros() > best.resetAfterMicros();
	}

	/**
	 * Returns the names of the enforced policies whose limits rejected the call.
	 * @return the policy names, empty when allowed
	 */
	public List<String> violatedPolicies() {
		return violatedPolicies(this.decision);
	}

	/**
	 * Returns the names of the policies whose limits rejected a decision.
	 * @param decision the decision
	 * @return the distinct policy names, in order
	 */
	public static List<String> violatedPolicies(Decision decision) {
		return decision.rejectedBy().stream().map((status) -> status.target().policy()).distinct().toList();
	}

	/**
	 * Returns how long the call must wait before it proceeds: the shaping delay of the
	 * enforced limits.
	 * @return the delay, zero for most calls
	 */
	public Duration delay() {
		return this.decision.delay();
	}

	@Override
	public String toString() {
		return "RateLimitResult[" + (isAllowed() ? "allowed" : "rejected") + ", tier=" + this.tier + ", cost="
				+ this.cost + ", policies=" + this.policies + ", decision=" + this.decision
				+ ((this.shadowDecision != null) ? ", shadowCost=" + this.shadowCost + ", shadow=" + this.shadowDecision
						: "")
				+ "]";
	}

}
