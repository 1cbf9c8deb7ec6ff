package dev.ratelimit.peers;

import java.util.Arrays;
import java.util.List;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Fails start-up, before any bean is made, unless exactly one variant's profile is
 * active: with none, every limiter is off, so a misspelt profile would measure
 * {@code off} under another name; with two, two limiters would act.
 */
final class VariantProfileCheck implements EnvironmentPostProcessor {

	/** The variants, each a Spring profile. */
	static final List<String> VARIANTS = List.of("off", "memory", "redis", "redis-reservoir", "resilience4j",
			"bucket4j-memory", "bucket4j-redis");

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		List<String> active = Arrays.stream(environment.getActiveProfiles()).filter(VARIANTS::contains).toList();
		if (active.size() != 1) {
			throw new IllegalStateException("Set spring.profiles.active to exactly one variant of " + VARIANTS
					+ "; the active profiles are " + Arrays.toString(environment.getActiveProfiles()));
		}
	}

}
