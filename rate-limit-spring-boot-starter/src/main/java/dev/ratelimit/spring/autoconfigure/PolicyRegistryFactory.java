package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.InvalidLimitException;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.Rate;
import dev.ratelimit.core.redis.InvalidRedisSettingException;
import dev.ratelimit.core.redis.RedisSetting;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;
import dev.ratelimit.spring.key.ClientAddressResolver;
import dev.ratelimit.spring.key.IpAddressRange;
import dev.ratelimit.spring.key.KeyResolverFactory;

/**
 * Reads {@link RateLimitProperties} into runtime objects, checking every value and
 * reporting each mistake with the path of its property.
 */
final class PolicyRegistryFactory {

	private static final String RESERVOIR_PROPERTY = "ratelimit.redis.reservoir";

	private static final String DEPRECATED_RESERVOIR_PROPERTY = "ratelimit.redis.lease";

	private PolicyRegistryFactory() {
	}

	static List<IpAddressRange> trustedProxies(RateLimitProperties properties) {
		List<Problem> problems = new ArrayList<>();
		List<IpAddressRange> ranges = new ArrayList<>();
		List<String> proxies = properties.getClient().getTrustedProxies();
		for (int i = 0; i < proxies.size(); i++) {
			try {
				ranges.add(IpAddressRange.parse(proxies.get(i)));
			}
			catch (IllegalArgumentException ex) {
				problems.add(new Problem("ratelimit.client.trusted-proxies[" + i + "]", ex.getMessage()));
			}
		}
		throwIfAny(problems);
		return ranges;
	}

	static int ipv6PrefixLength(RateLimitProperties properties) {
		List<Problem> problems = new ArrayList<>();
		checkIpv6PrefixLength(properties, problems);
		throwIfAny(problems);
		return properties.getClient().getIpv6PrefixLength();
	}

	private static void checkIpv6PrefixLength(RateLimitProperties properties, List<Problem> problems) {
		int length = properties.getClient().getIpv6PrefixLength();
		if (length < 1 || length > ClientAddressResolver.WHOLE_IPV6_ADDRESS) {
			problems.add(new Problem("ratelimit.client.ipv6-prefix-length",
					"is " + length + "; it must be from 1 to 128 (64 keys each /64 network, 128 each address)"));
		}
	}

	/**
	 * Checks the Redis settings with the Redis backend's own checks, whatever the
	 * backend, so that a mistake fails start-up before the backend is switched to Redis.
	 */
	static void checkRedis(RateLimitProperties properties) {
		List<Problem> problems = new ArrayList<>();
		checkRedis(properties, problems);
		throwIfAny(problems);
	}

	private static void checkRedis(RateLimitProperties properties, List<Problem> problems) {
		RateLimitProperties.Redis redis = properties.getRedis();
		List<Runnable> checks = List.of(() -> RedisSetting.checkTimeout(redis.getTimeout()),
				() -> RedisSetting.checkReservoir(reservoir(redis)),
				() -> RedisSetting.checkKeyPrefix(redis.getKeyPrefix()));
		for (Runnable check : checks) {
			try {
				check.run();
			}
			catch (InvalidRedisSettingException ex) {
				problems.add(redisProblem(redis, ex));
			}
		}
		checkReservoirAlias(redis, problems);
	}

	private static Problem redisProblem(RateLimitProperties.Redis redis, InvalidRedisSettingException ex) {
		if (ex.setting() == RedisSetting.RESERVOIR && redis.getReservoir() == null && deprecatedLease(redis) != null) {
			return new Problem(DEPRECATED_RESERVOIR_PROPERTY,
					ex.getMessage() + "; it is the deprecated name of " + RESERVOIR_PROPERTY);
		}
		return new Problem("ratelimit.redis." + ex.setting().configName(), ex.getMessage());
	}

	private static void checkReservoirAlias(RateLimitProperties.Redis redis, List<Problem> problems) {
		Long reservoir = redis.getReservoir();
		Long lease = deprecatedLease(redis);
		if (reservoir != null && lease != null && !reservoir.equals(lease)) {
			problems.add(new Problem(RESERVOIR_PROPERTY, "is " + reservoir + " but " + DEPRECATED_RESERVOIR_PROPERTY
					+ ", its deprecated name, is " + lease + "; remove " + DEPRECATED_RESERVOIR_PROPERTY));
		}
	}

	/**
	 * Returns the reservoir size of two-tier mode: {@code ratelimit.redis.reservoir},
	 * else its deprecated name {@code ratelimit.redis.lease}, else 0 (off).
	 */
	static long reservoir(RateLimitProperties.Redis redis) {
		Long reservoir = redis.getReservoir();
		if (reservoir != null) {
			return reservoir;
		}
		Long lease = deprecatedLease(redis);
		return (lease != null) ? lease : 0;
	}

	@SuppressWarnings("deprecation")
	private static @Nullable Long deprecatedLease(RateLimitProperties.Redis redis) {
		return redis.getLease();
	}

	static @Nullable String apiKeySecret(RateLimitProperties properties) {
		List<Problem> problems = new ArrayList<>();
		checkApiKeySecret(properties, problems);
		throwIfAny(problems);
		return properties.getClient().getApiKeySecret();
	}

	private static void checkApiKeySecret(RateLimitProperties properties, List<Problem> problems) {
		String secret = properties.getClient().getApiKeySecret();
		if (secret != null && secret.isBlank()) {
			problems.add(new Problem("ratelimit.client.api-key-secret", "is blank; set a secret (such as 32 random"
					+ " bytes in base64), or remove the property to hash API keys with plain SHA-256"));
		}
	}

	static PolicyRegistry policies(RateLimitProperties properties, KeyResolverFactory keyResolvers) {
		List<Problem> problems = new ArrayList<>();
		checkGeneral(properties, problems);
		List<Policy> policies = new ArrayList<>();
		properties.getPolicies().forEach((name, spec) -> {
			Policy policy = policy(name, spec, keyResolvers, problems);
			if (policy != null) {
				policies.add(policy);
			}
		});
		String defaultTier = properties.getDefaultTier();
		PolicyRegistry registry = new PolicyRegistry(policies,
				(defaultTier != null && !defaultTier.isBlank()) ? defaultTier : RateLimitProperties.DEFAULT_TIER);
		int before = problems.size();
		if (defaultTier != null) {
			checkDefaultTier(defaultTier, properties, problems);
		}
		if (problems.size() == before) {
			checkTierOnlyPolicies(registry.defaultTier(), properties, problems);
		}
		throwIfAny(problems);
		return registry;
	}

	/**
	 * Checks that every policy with tiers only lists the default tier, whose limits it
	 * applies to callers of the tiers it does not list: without them, all those callers
	 * would not be limited by the policy. An empty list for the default tier says so on
	 * purpose.
	 */
	private static void checkTierOnlyPolicies(String defaultTier, RateLimitProperties properties,
			List<Problem> problems) {
		properties.getPolicies().forEach((name, spec) -> {
			if (!spec.getLimits().isEmpty() || spec.getTiers().isEmpty()) {
				return;
			}
			boolean listed = spec.getTiers()
				.keySet()
				.stream()
				.anyMatch((tier) -> PolicyRegistry.normalizeTier(tier).equals(defaultTier));
			if (!listed) {
				problems.add(new Problem("ratelimit.policies." + name + ".tiers", "lists neither the default tier '"
						+ defaultTier + "' (ratelimit.default-tier) nor has 'limits', so callers of that tier, and of"
						+ " every tier the policy does not list (whose callers get the default tier's limits),"
						+ " would not be limited by it; add tiers." + defaultTier + " (an empty list leaves them"
						+ " unlimited on purpose), add 'limits' for every tier not listed, or set"
						+ " ratelimit.default-tier to a tier that the policy lists"));
			}
		});
	}

	/**
	 * Checks the settings outside the policies, for a bean that may be created before the
	 * policies are read.
	 */
	static void checkGeneral(RateLimitProperties properties) {
		List<Problem> problems = new ArrayList<>();
		checkGeneral(properties, problems);
		throwIfAny(problems);
	}

	private static void checkGeneral(RateLimitProperties properties, List<Problem> problems) {
		if (properties.getMemory().getMaxKeys() < 1) {
			problems.add(new Problem("ratelimit.memory.max-keys",
					"must be at least 1 (was " + properties.getMemory().getMaxKeys() + ")"));
		}
		checkRedis(properties, problems);
		checkIpv6PrefixLength(properties, problems);
		String header = properties.getClient().getApiKeyHeader();
		if (header == null || header.isBlank()) {
			problems.add(new Problem("ratelimit.client.api-key-header", "must name a header, such as X-API-Key"));
		}
		checkApiKeySecret(properties, problems);
		RateLimitProperties.Overrides overrides = properties.getOverrides();
		if (overrides.getCacheSize() < 1) {
			problems.add(new Problem("ratelimit.overrides.cache-size",
					"must be at least 1 (was " + overrides.getCacheSize() + ")"));
		}
		if (overrides.getCacheTtl() == null || overrides.getCacheTtl().isNegative()
				|| overrides.getCacheTtl().isZero()) {
			problems.add(new Problem("ratelimit.overrides.cache-ttl",
					"must be positive (was " + overrides.getCacheTtl() + ")"));
		}
	}

	/**
	 * Checks the default tier against the tiers of every configured policy, valid or not,
	 * so that a policy reported for a mistake of its own does not also make the default
	 * tier look unknown.
	 */
	private static void checkDefaultTier(String defaultTier, RateLimitProperties properties, List<Problem> problems) {
		Set<String> known = new TreeSet<>();
		for (RateLimitProperties.Policy spec : properties.getPolicies().values()) {
			spec.getTiers().keySet().forEach((name) -> known.add(PolicyRegistry.normalizeTier(name)));
		}
		String tier = PolicyRegistry.normalizeTier(defaultTier);
		if (known.isEmpty()) {
			problems.add(new Problem("ratelimit.default-tier", "is '" + defaultTier + "', but no policy defines"
					+ " tiers; define it under ratelimit.policies.NAME.tiers." + tier + " or remove default-tier"));
		}
		else if (!known.contains(tier)) {
			problems.add(new Problem("ratelimit.default-tier", "is '" + defaultTier
					+ "', which no policy defines under 'tiers'; known tiers: " + String.join(", ", known)));
		}
	}

	private static @Nullable Policy policy(String name, RateLimitProperties.Policy spec,
			KeyResolverFactory keyResolvers, List<Problem> problems) {
		String path = "ratelimit.policies." + name;
		int before = problems.size();
		KeyResolver keyResolver = null;
		try {
			keyResolver = keyResolvers.create(spec.getKey());
		}
		catch (IllegalArgumentException ex) {
			problems.add(new Problem(path + ".key", ex.getMessage()));
		}
		Duration penalty = spec.getPenalty();
		if (penalty != null && (penalty.isNegative() || penalty.isZero())) {
			problems.add(new Problem(path + ".penalty", "must be positive, such as 15m (was " + penalty + ")"));
			penalty = null;
		}
		Duration limitPenalty = penalty;
		List<Limit> limits = limits(spec.getLimits(), path + ".limits", limitPenalty, problems);
		Map<String, List<Limit>> tiers = new LinkedHashMap<>();
		spec.getTiers().forEach((tier, tierLimits) -> {
			String tierPath = path + ".tiers." + tier;
			String normalized = PolicyRegistry.normalizeTier(tier);
			if (tiers.containsKey(normalized)) {
				problems.add(new Problem(tierPath, "repeats tier '" + normalized + "' (tiers are case-insensitive)"));
			}
			tiers.put(normalized,
					limits((tierLimits != null) ? tierLimits : List.of(), tierPath, limitPenalty, problems));
		});
		if (spec.getLimits().isEmpty() && spec.getTiers().isEmpty()) {
			problems.add(new Problem(path, "defines no limits; add 'limits' (for every tier) or 'tiers'"));
		}
		RateLimitCondition countIf = countIf(spec, path, limits, tiers, problems);
		if (problems.size() > before || keyResolver == null) {
			return null;
		}
		return new Policy(name, spec.getKey().trim(), keyResolver, spec.isShadow(), limits, tiers, countIf,
				spec.getCountIfMode() != RateLimitProperties.CountIfMode.CHECK_THEN_CHARGE);
	}

	/**
	 * Parses the condition of a policy charged by the response: none when it is not set
	 * or blank. It may read {@code #response} besides a request's variables; a shadow
	 * policy, which never rejects, and a concurrency limit, which holds a permit while
	 * the call runs, cannot be charged after the response.
	 */
	private static @Nullable RateLimitCondition countIf(RateLimitProperties.Policy spec, String path,
			List<Limit> limits, Map<String, List<Limit>> tiers, List<Problem> problems) {
		String text = spec.getCountIf();
		if (text == null || text.isBlank()) {
			if (spec.getCountIfMode() != null) {
				problems.add(new Problem(path + ".count-if-mode",
						"applies only to a policy with 'count-if'; set 'count-if' or remove 'count-if-mode'"));
			}
			return null;
		}
		String property = path + ".count-if";
		RateLimitCondition countIf;
		try {
			countIf = RateLimitCondition.parse(text);
		}
		catch (IllegalArgumentException ex) {
			problems.add(new Problem(property, ex.getMessage()));
			return null;
		}
		for (String variable : countIf.unknownRequestVariables()) {
			if (!variable.equals("response")) {
				problems.add(new Problem(property, "'" + text.trim() + "' reads #" + variable
						+ ", which a response does not have; it can read #response, #request and #principal"));
			}
		}
		if (spec.isShadow()) {
			problems.add(new Problem(property, "does not apply to a shadow policy, which never rejects a request;"
					+ " remove 'shadow' or 'count-if'"));
		}
		boolean concurrency = Stream.concat(Stream.of(limits), tiers.values().stream())
			.flatMap(List::stream)
			.anyMatch((limit) -> limit.algorithm() == Algorithm.CONCURRENCY);
		if (concurrency) {
			problems.add(new Problem(property, "does not apply to a concurrency limit, which holds a permit while"
					+ " the request runs; put the concurrency limit in a policy of its own"));
		}
		return countIf;
	}

	private static List<Limit> limits(List<RateLimitProperties.LimitSpec> specs, String path,
			@Nullable Duration penalty, List<Problem> problems) {
		List<Limit> limits = new ArrayList<>(specs.size());
		for (int i = 0; i < specs.size(); i++) {
			Limit limit = limit(specs.get(i), path + "[" + i + "]", penalty, problems);
			if (limit != null) {
				limits.add(limit);
			}
		}
		return limits;
	}

	static @Nullable Limit limit(RateLimitProperties.LimitSpec spec, String path, List<Problem> problems) {
		return limit(spec, path, null, problems);
	}

	/**
	 * Reads a limit, with its policy's penalty, which every limit of a policy carries.
	 */
	static @Nullable Limit limit(RateLimitProperties.LimitSpec spec, String path, @Nullable Duration penalty,
			List<Problem> problems) {
		Algorithm algorithm = spec.getAlgorithm();
		Limit.Builder builder = Limit.builder(algorithm);
		if (spec.getRate() != null) {
			try {
				builder.rate(Rate.parse(spec.getRate()));
			}
			catch (InvalidLimitException ex) {
				problems.add(problem(path, ex));
				return null;
			}
		}
		if (algorithm == Algorithm.CONCURRENCY) {
			if (spec.getCapacity() != null) {
				problems.add(new Problem(path + ".capacity",
						"does not apply to a concurrency limit; set 'max', the requests in flight per key"));
				return null;
			}
			if (spec.getMax() != null) {
				builder.max(spec.getMax());
			}
		}
		else {
			if (spec.getMax() != null) {
				problems.add(new Problem(path + ".max", "applies to concurrency limits only, not to a "
						+ algorithm.configName() + " limit; use 'rate' and 'capacity'"));
				return null;
			}
			if (spec.getCapacity() != null) {
				builder.capacity(spec.getCapacity());
			}
		}
		if (spec.getInitial() != null) {
			builder.initial(spec.getInitial());
		}
		if (spec.getMode() != null) {
			builder.mode(spec.getMode());
		}
		if (spec.getMaxWait() != null) {
			builder.maxWait(spec.getMaxWait());
		}
		if (spec.getLeaseTime() != null) {
			builder.leaseTime(spec.getLeaseTime());
		}
		if (spec.getAlign() != null) {
			builder.align(spec.getAlign());
		}
		try {
			if (spec.getZone() != null) {
				builder.zone(spec.getZone());
			}
			if (penalty != null) {
				builder.penalty(penalty);
			}
			return builder.build();
		}
		catch (InvalidLimitException ex) {
			problems.add(problem(path, ex));
			return null;
		}
	}

	/**
	 * The problem of a limit at {@code path}, under the property of the parameter at
	 * fault, or of the limit itself when its values are each valid but not together.
	 */
	private static Problem problem(String path, InvalidLimitException ex) {
		Limit.Parameter parameter = ex.parameter();
		return new Problem((parameter != null) ? path + "." + parameter.configName() : path, ex.getMessage());
	}

	static void throwIfAny(List<Problem> problems) {
		if (!problems.isEmpty()) {
			throw new RateLimitConfigurationException(problems);
		}
	}

}
