package dev.ratelimit.spring.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.RateLimitCondition;
import org.jspecify.annotations.Nullable;

/**
 * A configured policy, as the {@code ratelimits} endpoint describes it.
 *
 * @param key the key strategy, such as {@code api-key}
 * @param shadow whether the policy only observes and never rejects
 * @param limits the limits of every tier without limits of its own
 * @param tiers the limits of each tier that has its own, by tier
 * @param countIf the condition under which a request is charged after its response
 * ({@code count-if}), or {@code null} when every request counts
 * @param countIfMode with a condition, how requests in flight count against it:
 * {@code reserve} or {@code check-then-charge}; else {@code null}
 */
public record PolicyDescriptor(String key, boolean shadow, List<LimitDescriptor> limits,
		Map<String, List<LimitDescriptor>> tiers, @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String countIf,
		@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String countIfMode) {

	static PolicyDescriptor of(Policy policy) {
		Map<String, List<LimitDescriptor>> tiers = new LinkedHashMap<>();
		policy.tiers().forEach((tier, limits) -> tiers.put(tier, limits.stream().map(LimitDescriptor::of).toList()));
		RateLimitCondition countIf = policy.countIf();
		return new PolicyDescriptor(policy.keyStrategy(), policy.isShadow(),
				policy.limits().stream().map(LimitDescriptor::of).toList(), tiers,
				(countIf != null) ? countIf.toString() : null,
				(countIf != null) ? (policy.reservesCountIf() ? "reserve" : "check-then-charge") : null);
	}

}
