package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimit.core.Limit;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Reads limits written as in YAML but given at run time, such as in the body of an
 * override: each a map of a limit's keys ({@code rate}, {@code capacity}, ...), bound and
 * checked exactly as {@code ratelimit.policies.*.limits} are.
 */
final class LimitSpecParser {

	private static final Set<String> KEYS = Set.of("algorithm", "rate", "capacity", "initial", "mode", "max-wait",
			"max", "lease-time", "align", "zone");

	private LimitSpecParser() {
	}

	/**
	 * Reads the limits.
	 * @param specs the limits, each a map
	 * @param path the path that messages name them under, such as {@code limits}
	 * @return the limits
	 * @throws RateLimitConfigurationException naming every limit and key that is wrong
	 */
	static List<Limit> parse(List<?> specs, String path) {
		return parse(specs, path, null);
	}

	/**
	 * Reads the limits of a policy with a penalty, which every limit of the policy
	 * carries.
	 * @param specs the limits, each a map
	 * @param path the path that messages name them under, such as {@code limits}
	 * @param penalty the policy's penalty, or {@code null}
	 * @return the limits
	 * @throws RateLimitConfigurationException naming every limit and key that is wrong
	 */
	static List<Limit> parse(List<?> specs, String path, @Nullable Duration penalty) {
		List<Problem> problems = new ArrayList<>();
		List<Limit> limits = new ArrayList<>(specs.size());
		for (int i = 0; i < specs.size(); i++) {
			String at = path + "[" + i + "]";
			if (!(specs.get(i) instanceof Map<?, ?> spec)) {
				problems
					.add(new Problem(at, "must be a limit such as {\"rate\":\"5000/1m\"} (was " + specs.get(i) + ")"));
				continue;
			}
			Map<String, Object> values = new LinkedHashMap<>();
			int before = problems.size();
			spec.forEach((key, value) -> {
				String name = String.valueOf(key);
				String canonical = name.trim()
					.replaceAll("([a-z0-9])([A-Z])", "$1-$2")
					.replace('_', '-')
					.toLowerCase(java.util.Locale.ROOT);
				if (!KEYS.contains(canonical) || value == null || value instanceof Map || value instanceof List) {
					problems.add(new Problem(at + "." + name,
							(!KEYS.contains(canonical) ? "is not a key of a limit; known keys: " + KEYS
									: "must be a single value (was " + value + ")")));
					return;
				}
				values.put("limit." + canonical, value.toString());
			});
			if (problems.size() > before) {
				continue;
			}
			RateLimitProperties.LimitSpec bound;
			try {
				bound = new Binder(new MapConfigurationPropertySource(values))
					.bind("limit", Bindable.of(RateLimitProperties.LimitSpec.class))
					.orElseGet(RateLimitProperties.LimitSpec::new);
			}
			catch (BindException ex) {
				String property = (ex.getProperty() != null)
						? ex.getProperty().getName().toString().replaceFirst("^limit", at) : at;
				Throwable cause = ex;
				while (cause.getCause() != null) {
					cause = cause.getCause();
				}
				problems.add(new Problem(property, "is invalid: " + cause.getMessage()));
				continue;
			}
			Limit limit = PolicyRegistryFactory.limit(bound, at, penalty, problems);
			if (limit != null) {
				limits.add(limit);
			}
		}
		if (!problems.isEmpty()) {
			throw new RateLimitConfigurationException(problems);
		}
		return limits;
	}

}
