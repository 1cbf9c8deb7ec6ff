package dev.ratelimit.spring.actuate;

import java.util.List;

/**
 * Every override in force, as the {@code ratelimitoverrides} endpoint shows them.
 *
 * @param overrides the overrides, by policy and client
 */
public record OverridesDescriptor(List<OverrideDescriptor> overrides) {

}
