package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.WindowAlignment;
import dev.ratelimit.spring.key.ForwardedHeader;

/**
 * Configuration of rate limiting, bound from {@code ratelimit.*}.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

	/** The default of {@code ratelimit.default-tier}. */
	public static final String DEFAULT_TIER = "free";

	/**
	 * Whether rate limiting is enabled. When false, the starter creates no beans at all.
	 */
	private boolean enabled = true;

	/**
	 * Where the state of every limit is kept: in this JVM ('memory') or in Redis, shared
	 * by every instance ('redis').
	 */
	private Backend backend = Backend.MEMORY;

	/**
	 * What to do with a call when the backend fails or is slower than
	 * 'ratelimit.redis.timeout': 'allow' it, 'deny' it (503 with Retry-After), or decide
	 * it with in-memory limits local to this instance ('local').
	 */
	private FailureMode onBackendFailure = FailureMode.ALLOW;

	/**
	 * Tier of a caller for whom no tier resolves (no TIER_<NAME> authority and no tier
	 * request attribute). A policy with tiers only also applies this tier's limits to
	 * callers of a tier it does not list. When set, it must be a tier that some policy
	 * defines under 'tiers'. Defaults to 'free'.
	 */
	private @Nullable String defaultTier;

	private final Redis redis = new Redis();

	private final Memory memory = new Memory();

	private final Headers headers = new Headers();

	private final Client client = new Client();

	/**
	 * Per-client overrides, set through the {@code ratelimitoverrides} endpoint.
	 */
	private final Overrides overrides = new Overrides();

	/**
	 * Named policies: how a caller is keyed and the limits for each tier.
	 */
	private Map<String, Policy> policies = new LinkedHashMap<>();

	/**
	 * Request filters: which policies apply to which request paths and methods, and what
	 * a request costs.
	 */
	private List<Filter> filters = new ArrayList<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Backend getBackend() {
		return this.backend;
	}

	public void setBackend(Backend backend) {
		this.backend = backend;
	}

	public FailureMode getOnBackendFailure() {
		return this.onBackendFailure;
	}

	public void setOnBackendFailure(FailureMode onBackendFailure) {
		this.onBackendFailure = onBackendFailure;
	}

	public @Nullable String getDefaultTier() {
		return this.defaultTier;
	}

	public void setDefaultTier(@Nullable String defaultTier) {
		this.defaultTier = defaultTier;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Memory getMemory() {
		return this.memory;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public Client getClient() {
		return this.client;
	}

	public Overrides getOverrides() {
		return this.overrides;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public void setPolicies(Map<String, Policy> policies) {
		this.policies = policies;
	}

	public List<Filter> getFilters() {
		return this.filters;
	}

	public void setFilters(List<Filter> filters) {
		this.filters = filters;
	}

	/**
	 * Where limit state is kept.
	 */
	public enum Backend {

		/** In this JVM: each instance limits on its own. */
		MEMORY,

		/** In Redis: every instance shares the same limits. */
		REDIS

	}

	/**
	 * How a policy with {@code count-if} keeps requests in flight from passing its limit.
	 */
	public enum CountIfMode {

		/**
		 * The cost is taken before the handler runs and given back once the response
		 * shows the condition false: requests in flight together never pass the limit,
		 * and a success holds a permit until its response. For failed logins.
		 */
		RESERVE,

		/**
		 * The cost is only checked before the handler runs and taken once the response
		 * shows the condition true: a success never holds a permit, and each request in
		 * flight may pass the limit by one. For error budgets.
		 */
		CHECK_THEN_CHARGE

	}

	/**
	 * Redis backend settings.
	 */
	public static class Redis {

		/**
		 * Prefix of every key the rate limiter writes to Redis.
		 */
		private String keyPrefix = "rl";

		/**
		 * Longest time a decision waits for Redis. A later answer is not a failure: the
		 * call is decided by this instance's own limits (refused with 'deny'), never
		 * allowed unlimited.
		 */
		private Duration timeout = Duration.ofMillis(100);

		/**
		 * Longest time start-up waits for Redis to take a first write, so that the
		 * application is not ready before its limiter is. A Redis that refuses ends the
		 * wait at once; calls then follow the failure mode until it works.
		 */
		private Duration startupTimeout = Duration.ofSeconds(5);

		/**
		 * Permits a key's limit takes from Redis per call into this instance's reservoir
		 * and spends locally (two-tier mode: token buckets, policing leaky buckets and
		 * windows); 0 asks Redis for every call. Defaults to 0.
		 */
		private @Nullable Long reservoir;

		/**
		 * Permits a key's limit takes from Redis per call into this instance's reservoir
		 * (two-tier mode); the former name of 'reservoir'.
		 */
		private @Nullable Long lease;

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Duration getStartupTimeout() {
			return this.startupTimeout;
		}

		public void setStartupTimeout(Duration startupTimeout) {
			this.startupTimeout = startupTimeout;
		}

		public @Nullable Long getReservoir() {
			return this.reservoir;
		}

		public void setReservoir(@Nullable Long reservoir) {
			this.reservoir = reservoir;
		}

		@Deprecated
		@DeprecatedConfigurationProperty(replacement = "ratelimit.redis.reservoir",
				reason = "'lease' names concurrency permits; the two-tier mode's permits sit in a reservoir",
				since = "0.1.0")
		public @Nullable Long getLease() {
			return this.lease;
		}

		@Deprecated
		public void setLease(@Nullable Long lease) {
			this.lease = lease;
		}

	}

	/**
	 * In-memory backend settings.
	 */
	public static class Overrides {

		/**
		 * Clients whose answer from an application's own LimitOverrides bean is cached.
		 */
		private long cacheSize = 10_000;

		/**
		 * How long an answer from an application's own LimitOverrides bean is cached; a
		 * change made elsewhere than through the endpoint applies within this time.
		 */
		private Duration cacheTtl = Duration.ofSeconds(10);

		public long getCacheSize() {
			return this.cacheSize;
		}

		public void setCacheSize(long cacheSize) {
			this.cacheSize = cacheSize;
		}

		public Duration getCacheTtl() {
			return this.cacheTtl;
		}

		public void setCacheTtl(Duration cacheTtl) {
			this.cacheTtl = cacheTtl;
		}

	}

	public static class Memory {

		/**
		 * Most keyed limits held in memory; beyond it, the least used are evicted first.
		 */
		private long maxKeys = 1_000_000;

		public long getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(long maxKeys) {
			this.maxKeys = maxKeys;
		}

	}

	/**
	 * Response header settings.
	 */
	public static class Headers {

		/**
		 * Whether limited responses carry the IETF RateLimit-Policy and RateLimit
		 * headers.
		 */
		private boolean enabled = true;

		/**
		 * Whether limited responses also carry X-RateLimit-Limit, X-RateLimit-Remaining
		 * and X-RateLimit-Reset.
		 */
		private boolean legacy = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public boolean isLegacy() {
			return this.legacy;
		}

		public void setLegacy(boolean legacy) {
			this.legacy = legacy;
		}

	}

	/**
	 * How callers are identified.
	 */
	public static class Client {

		/**
		 * Header that carries a caller's API key, read by the 'api-key' key strategy.
		 */
		private String apiKeyHeader = "X-API-Key";

		/**
		 * Secret with which the 'api-key' strategy hashes API keys (HMAC-SHA-256) before
		 * they become rate-limit keys; without it they are hashed with plain SHA-256,
		 * which anyone who can read the stored keys (Redis) can test guessed API keys
		 * against. Set it when API keys are short or guessable and the store is shared.
		 * Changing it starts every API-key client from a fresh state.
		 */
		private @Nullable String apiKeySecret;

		/**
		 * Addresses or CIDR blocks of proxies allowed to set the forwarding header (see
		 * forwarded-header); it is ignored when sent by anyone else.
		 */
		private List<String> trustedProxies = new ArrayList<>();

		/**
		 * The one forwarding header the trusted proxies write, x-forwarded-for or
		 * forwarded (RFC 7239); the other is never read, since a proxy passes it through
		 * as the client sent it.
		 */
		private ForwardedHeader forwardedHeader = ForwardedHeader.X_FORWARDED_FOR;

		/**
		 * Length of the IPv6 prefix that keys a client address (the 'ip' key strategy,
		 * and the other strategies' fallback), from 1 to 128: 64 keys all the addresses
		 * of a /64 network as one client, since an IPv6 host usually holds a whole /64
		 * and could otherwise escape its limits by changing address; 128 keys each
		 * address on its own. IPv4 addresses, IPv4-mapped ones too, are always keyed
		 * whole.
		 */
		private int ipv6PrefixLength = 64;

		/**
		 * Whether start-up fails when Spring Boot turns Tomcat's RemoteIpValve on for a
		 * detected cloud platform (Kubernetes, ...) and
		 * server.tomcat.remoteip.internal-proxies is not set. The valve then trusts
		 * X-Forwarded-For from every private and loopback address, so a caller on a
		 * private address could choose its client address. By default the application
		 * starts and logs a warning. Read at start-up.
		 */
		private boolean requireInternalProxies;

		/**
		 * Claim that holds a caller's tier in a Spring Security JWT (OAuth2 resource
		 * server) or OIDC user, such as 'plan'; read by the default tier resolver when
		 * the caller has no TIER_ authority. A string claim is the tier; a list claim,
		 * its first string. Empty: no claim is read. Needs spring-security-oauth2-core.
		 */
		private @Nullable String tierClaim;

		public @Nullable String getTierClaim() {
			return this.tierClaim;
		}

		public void setTierClaim(@Nullable String tierClaim) {
			this.tierClaim = tierClaim;
		}

		public boolean isRequireInternalProxies() {
			return this.requireInternalProxies;
		}

		public void setRequireInternalProxies(boolean requireInternalProxies) {
			this.requireInternalProxies = requireInternalProxies;
		}

		public int getIpv6PrefixLength() {
			return this.ipv6PrefixLength;
		}

		public void setIpv6PrefixLength(int ipv6PrefixLength) {
			this.ipv6PrefixLength = ipv6PrefixLength;
		}

		public ForwardedHeader getForwardedHeader() {
			return this.forwardedHeader;
		}

		public void setForwardedHeader(ForwardedHeader forwardedHeader) {
			this.forwardedHeader = forwardedHeader;
		}

		public String getApiKeyHeader() {
			return this.apiKeyHeader;
		}

		public void setApiKeyHeader(String apiKeyHeader) {
			this.apiKeyHeader = apiKeyHeader;
		}

		public @Nullable String getApiKeySecret() {
			return this.apiKeySecret;
		}

		public void setApiKeySecret(@Nullable String apiKeySecret) {
			this.apiKeySecret = apiKeySecret;
		}

		public List<String> getTrustedProxies() {
			return this.trustedProxies;
		}

		public void setTrustedProxies(List<String> trustedProxies) {
			this.trustedProxies = trustedProxies;
		}

	}

	/**
	 * A named policy.
	 */
	public static class Policy {

		/**
		 * How a caller is keyed: principal, api-key, ip, global, header:NAME, bean:NAME
		 * (a KeyResolver bean) or SpEL "#{...}".
		 */
		private String key = "principal";

		/**
		 * Whether the policy only observes: it is decided, recorded and reported in
		 * headers, but never rejects.
		 */
		private boolean shadow;

		/**
		 * SpEL condition "#{...}" over #response (its status and headers), #request and
		 * #principal: when set, a request is rejected before its handler only if fewer
		 * permits are left than its cost, and charged after the response only when the
		 * condition holds, such as "#{#response.status == 401}" for failed logins.
		 */
		private @Nullable String countIf;

		/**
		 * How requests in flight are counted against a 'count-if' policy: 'reserve' takes
		 * the cost before the handler and gives it back when the condition is false, so
		 * that parallel requests never pass the limit; 'check-then-charge' only checks
		 * before and charges after, so that a success never holds a permit, but each
		 * request in flight may pass the limit by one. Default: reserve.
		 */
		private @Nullable CountIfMode countIfMode;

		/**
		 * Limits for every tier that has no limits of its own.
		 */
		private List<LimitSpec> limits = new ArrayList<>();

		/**
		 * Limits per tier; they replace 'limits' for that tier. An empty list leaves the
		 * tier unlimited. A policy without 'limits' applies those of the default tier
		 * (which it must list) to callers of a tier it does not list.
		 */
		private Map<String, List<LimitSpec>> tiers = new LinkedHashMap<>();

		/**
		 * Once the policy rejects a client, how long that client is refused, whatever the
		 * limits say. None by default.
		 */
		private @Nullable Duration penalty;

		public @Nullable Duration getPenalty() {
			return this.penalty;
		}

		public void setPenalty(@Nullable Duration penalty) {
			this.penalty = penalty;
		}

		public String getKey() {
			return this.key;
		}

		public void setKey(String key) {
			this.key = key;
		}

		public boolean isShadow() {
			return this.shadow;
		}

		public void setShadow(boolean shadow) {
			this.shadow = shadow;
		}

		public @Nullable String getCountIf() {
			return this.countIf;
		}

		public void setCountIf(@Nullable String countIf) {
			this.countIf = countIf;
		}

		public @Nullable CountIfMode getCountIfMode() {
			return this.countIfMode;
		}

		public void setCountIfMode(@Nullable CountIfMode countIfMode) {
			this.countIfMode = countIfMode;
		}

		public List<LimitSpec> getLimits() {
			return this.limits;
		}

		public void setLimits(List<LimitSpec> limits) {
			this.limits = limits;
		}

		public Map<String, List<LimitSpec>> getTiers() {
			return this.tiers;
		}

		public void setTiers(Map<String, List<LimitSpec>> tiers) {
			this.tiers = tiers;
		}

	}

	/**
	 * One limit of a policy.
	 */
	public static class LimitSpec {

		/**
		 * Algorithm: token-bucket, leaky-bucket, fixed-window, sliding-window-log,
		 * sliding-window-counter or concurrency.
		 */
		private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

		/**
		 * Permits per period, N/PERIOD, such as 5/1s, 60/1m or 1/10s. For window
		 * algorithms, N per window of that length. Not used by concurrency limits. A
		 * period in months, such as 100000/1mo, needs 'align: calendar'.
		 */
		private @Nullable String rate;

		/**
		 * Token bucket: burst size; leaky bucket: queue depth. Defaults to N of the rate.
		 */
		private @Nullable Long capacity;

		/**
		 * Token bucket: tokens at the first sight of a key. Defaults to the capacity.
		 */
		private @Nullable Long initial;

		/**
		 * Leaky bucket: 'police' rejects when full; 'shape' delays a request until its
		 * turn.
		 */
		private @Nullable LeakMode mode;

		/**
		 * Leaky bucket in mode 'shape': the longest delay; a request that would wait
		 * longer is rejected.
		 */
		private @Nullable Duration maxWait;

		/**
		 * Concurrency: requests in flight per key.
		 */
		private @Nullable Long max;

		/**
		 * Concurrency: how long a permit lives if it is never released (a crashed
		 * instance). Defaults to 1m.
		 */
		private @Nullable Duration leaseTime;

		/**
		 * Fixed window: where windows start. 'epoch' (the default) counts windows of the
		 * rate's length from the epoch; 'calendar' starts a window of 1d, 1w (from
		 * Monday) or 1mo at midnight in 'zone'.
		 */
		private @Nullable WindowAlignment align;

		/**
		 * Fixed window with 'align: calendar': the time zone whose midnights start the
		 * windows, such as Europe/Paris. Defaults to UTC.
		 */
		private @Nullable String zone;

		public Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public @Nullable String getRate() {
			return this.rate;
		}

		public void setRate(@Nullable String rate) {
			this.rate = rate;
		}

		public @Nullable Long getCapacity() {
			return this.capacity;
		}

		public void setCapacity(@Nullable Long capacity) {
			this.capacity = capacity;
		}

		public @Nullable Long getInitial() {
			return this.initial;
		}

		public void setInitial(@Nullable Long initial) {
			this.initial = initial;
		}

		public @Nullable LeakMode getMode() {
			return this.mode;
		}

		public void setMode(@Nullable LeakMode mode) {
			this.mode = mode;
		}

		public @Nullable Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(@Nullable Duration maxWait) {
			this.maxWait = maxWait;
		}

		public @Nullable Long getMax() {
			return this.max;
		}

		public void setMax(@Nullable Long max) {
			this.max = max;
		}

		public @Nullable Duration getLeaseTime() {
			return this.leaseTime;
		}

		public void setLeaseTime(@Nullable Duration leaseTime) {
			this.leaseTime = leaseTime;
		}

		public @Nullable WindowAlignment getAlign() {
			return this.align;
		}

		public void setAlign(@Nullable WindowAlignment align) {
			this.align = align;
		}

		public @Nullable String getZone() {
			return this.zone;
		}

		public void setZone(@Nullable String zone) {
			this.zone = zone;
		}

	}

	/**
	 * A request filter.
	 */
	public static class Filter {

		/**
		 * Request paths the filter applies to, in Spring PathPattern syntax, such as
		 * /api/**.
		 */
		private List<String> patterns = new ArrayList<>();

		/**
		 * HTTP methods the filter applies to; empty for all.
		 */
		private List<String> methods = new ArrayList<>();

		/**
		 * Names of the policies that apply to matching requests.
		 */
		private List<String> policies = new ArrayList<>();

		/**
		 * Permits a matching request takes: a whole number, or SpEL "#{...}" with
		 * #request.
		 */
		private String cost = "1";

		/**
		 * Condition under which the filter applies to a matching request: SpEL "#{...}"
		 * with #request and #principal that gives true or false, or true or false; none
		 * for every matching request.
		 */
		private @Nullable String when;

		/**
		 * Whether the filter applies its policies before Spring Security authenticates
		 * the request, so that the requests Security rejects (a wrong password, an
		 * unknown API key, a bad token) are limited too. No caller is authenticated yet:
		 * its policies must be keyed by 'ip' or 'global', without tiers.
		 */
		private boolean beforeSecurity;

		public boolean isBeforeSecurity() {
			return this.beforeSecurity;
		}

		public void setBeforeSecurity(boolean beforeSecurity) {
			this.beforeSecurity = beforeSecurity;
		}

		public List<String> getPatterns() {
			return this.patterns;
		}

		public void setPatterns(List<String> patterns) {
			this.patterns = patterns;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

		public List<String> getPolicies() {
			return this.policies;
		}

		public void setPolicies(List<String> policies) {
			this.policies = policies;
		}

		public String getCost() {
			return this.cost;
		}

		public void setCost(String cost) {
			this.cost = cost;
		}

		public @Nullable String getWhen() {
			return this.when;
		}

		public void setWhen(@Nullable String when) {
			this.when = when;
		}

	}

}
