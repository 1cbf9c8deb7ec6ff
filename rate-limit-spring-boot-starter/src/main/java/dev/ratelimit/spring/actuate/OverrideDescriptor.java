package dev.ratelimit.spring.actuate;

import java.time.Instant;
import java.util.List;

import dev.ratelimit.spring.overrides.LimitOverride;
import org.jspecify.annotations.Nullable;

/**
 * One client's override in one policy, as the {@code ratelimitoverrides} endpoint shows
 * it.
 *
 * @param policy the policy name
 * @param client the client as its policy stores it (an API key hashed)
 * @param limits the limits the client gets instead of its tier's
 * @param expires when the override ends, or {@code null} for never
 */
public record OverrideDescriptor(String policy, String client, List<LimitDescriptor> limits,
		@Nullable Instant expires) {

	static OverrideDescriptor of(LimitOverride override) {
		return new OverrideDescriptor(override.policy(), override.client(),
				override.limits().stream().map(LimitDescriptor::of).toList(), override.expires());
	}

}
