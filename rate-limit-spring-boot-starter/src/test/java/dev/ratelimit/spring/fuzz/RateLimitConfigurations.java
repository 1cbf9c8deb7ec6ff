package dev.ratelimit.spring.fuzz;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Arbitrary {@code ratelimit.*} property sets, valid and invalid, biased toward the
 * edges: algorithms and their misspellings, rates such as {@code 0/1s}, {@code 5/0s} and
 * {@code 1/10s}, numbers at the limits of a long, options that do or do not apply to the
 * algorithm, tiers, every key strategy (and broken SpEL), filters, client settings,
 * values where Boot expects a structure, and unicode and control characters in names and
 * values.
 */
final class RateLimitConfigurations {

	private static final String POLICIES = "ratelimit.policies";

	private RateLimitConfigurations() {
	}

	/**
	 * One property, as a property source would hold it.
	 *
	 * @param name the property name
	 * @param value the value
	 */
	record Entry(String name, String value) {

		Entry withPrefix(String prefix) {
			return new Entry(prefix + this.name, this.value);
		}

		@Override
		public String toString() {
			return escape(this.name) + "=" + escape(this.value);
		}

	}

	/**
	 * A generated configuration: the properties, in order (a later one with the same name
	 * wins), and the annotated beans the application has.
	 *
	 * @param properties the properties
	 * @param beans the application's beans beyond the fuzz application's own
	 */
	record GeneratedConfiguration(List<Entry> properties, List<Class<?>> beans) {

		Map<String, Object> asMap() {
			Map<String, Object> map = new LinkedHashMap<>();
			this.properties.forEach((entry) -> map.put(entry.name(), entry.value()));
			return map;
		}

		boolean hasExpression() {
			return this.properties.stream().anyMatch((entry) -> entry.value().contains("#{")) || !this.beans.isEmpty();
		}

		@Override
		public String toString() {
			return this.properties.stream().map(Entry::toString).collect(Collectors.joining("\n    ", "\n    ", ""))
					+ (this.beans.isEmpty() ? ""
							: "\n    beans: " + this.beans.stream().map(Class::getSimpleName).toList());
		}

	}

	/**
	 * Configurations: two in five well formed (most of them start), the others anything
	 * (most of them do not).
	 */
	static Arbitrary<GeneratedConfiguration> configurations(List<Class<?>> annotatedBeans) {
		Arbitrary<List<Class<?>>> beans = Arbitraries.frequencyOf(Tuple.of(17, Arbitraries.just(List.<Class<?>>of())),
				Tuple.of(3, Arbitraries.of(annotatedBeans).map((bean) -> List.<Class<?>>of(bean))));
		Arbitrary<List<Entry>> properties = Arbitraries.frequencyOf(Tuple.of(2, wellFormed()), Tuple.of(3, anything()));
		return Combinators.combine(properties, beans).as(GeneratedConfiguration::new);
	}

	private static Arbitrary<List<Entry>> anything() {
		Arbitrary<List<Entry>> policies = policy().list().ofMaxSize(3).map(RateLimitConfigurations::flatten);
		Arbitrary<List<Entry>> filters = filter().list().ofMaxSize(3).map(RateLimitConfigurations::filters);
		Arbitrary<List<Entry>> oddities = Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.just(List.<Entry>of())),
				Tuple.of(1, oddity().list().ofMinSize(1).ofMaxSize(2)));
		Arbitrary<List<Entry>> properties = Combinators.combine(general(), client(), policies, filters, oddities)
			.as((general, client, policyEntries, filterEntries,
					odd) -> flatten(List.of(general, client, policyEntries, filterEntries, odd)));
		return Arbitraries.frequencyOf(Tuple.of(5, properties),
				Tuple.of(1, Combinators.combine(properties, mutation().list().ofMinSize(1).ofMaxSize(2))
					.as(RateLimitConfigurations::mutate)));
	}

	/**
	 * Valid values only, and filters that name the policies defined: a configuration that
	 * should start.
	 */
	private static Arbitrary<List<Entry>> wellFormed() {
		Arbitrary<List<Entry>> general = Combinators
			.combine(
					optional(0.2,
							Arbitraries.of("memory", "MEMORY").map((value) -> new Entry("ratelimit.backend", value))),
					optional(0.2,
							Arbitraries.of("allow", "deny", "local")
								.map((value) -> new Entry("ratelimit.on-backend-failure", value))),
					optional(0.1,
							Arbitraries.of("1", "100", "1000000")
								.map((value) -> new Entry("ratelimit.memory.max-keys", value))),
					optional(0.1,
							Arbitraries.of("true", "false")
								.map((value) -> new Entry("ratelimit.headers.legacy", value))))
			.as((backend, failure, maxKeys, legacy) -> flatten(List.of(backend, failure, maxKeys, legacy)));
		Arbitrary<List<Entry>> client = Combinators
			.combine(
					optional(0.3, Arbitraries.of("10.0.0.0/8", "fd00::/8", "192.168.1.1", "::1", "0.0.0.0/0")
						.list()
						.ofMinSize(1)
						.ofMaxSize(3)
						.map((proxies) -> new Entry("ratelimit.client.trusted-proxies", String.join(",", proxies)))),
					optional(0.2,
							Arbitraries.of("x-forwarded-for", "forwarded", "FORWARDED")
								.map((value) -> new Entry("ratelimit.client.forwarded-header", value))),
					optional(0.2,
							Arbitraries.integers()
								.between(1, 128)
								.map((value) -> new Entry("ratelimit.client.ipv6-prefix-length", value.toString()))),
					optional(0.1,
							Arbitraries.of("X-API-Key", "Authorization-Key")
								.map((value) -> new Entry("ratelimit.client.api-key-header", value))))
			.as((proxies, header, prefix, apiKeyHeader) -> flatten(List.of(proxies, header, prefix, apiKeyHeader)));
		Arbitrary<List<String>> names = Arbitraries.of("api", "burst", "per-ip", "geo")
			.list()
			.uniqueElements()
			.ofMinSize(1)
			.ofMaxSize(3);
		Arbitrary<List<Entry>> policiesAndFilters = names.flatMap((defined) -> {
			List<Arbitrary<List<Entry>>> policies = defined.stream()
				.map(RateLimitConfigurations::wellFormedPolicy)
				.toList();
			Arbitrary<List<Entry>> filters = wellFormedFilter(defined).list().ofMaxSize(3).map((list) -> {
				List<List<Entry>> unique = new ArrayList<>();
				for (int i = 0; i < list.size(); i++) {
					String prefix = "/f" + i;
					unique.add(list.get(i)
						.stream()
						.map((entry) -> entry.name().startsWith("patterns")
								? new Entry(entry.name(), prefix + entry.value().replace(",", "," + prefix)) : entry)
						.toList());
				}
				return filters(unique);
			});
			return Combinators.combine(Combinators.combine(policies).as(RateLimitConfigurations::flatten), filters)
				.as((policyEntries, filterEntries) -> flatten(List.of(policyEntries, filterEntries)));
		});
		return Combinators.combine(general, client, policiesAndFilters)
			.as((generalEntries, clientEntries, rest) -> flatten(List.of(generalEntries, clientEntries, rest)));
	}

	private static Arbitrary<List<Entry>> wellFormedPolicy(String name) {
		String prefix = POLICIES + "." + name;
		Arbitrary<String> key = Arbitraries.of("principal", "api-key", "ip", "global", "header:X-Client",
				"bean:tenantKeys", "#{#request.getHeader('X-Tenant')?.toLowerCase()}", "#{#principal?.name}");
		Arbitrary<List<Entry>> limits = wellFormedLimit().list()
			.ofMinSize(1)
			.ofMaxSize(2)
			.map((list) -> indexedLimits("limits", list));
		Arbitrary<List<Entry>> tiers = Combinators
			.combine(wellFormedLimit().list().ofMinSize(1).ofMaxSize(2), wellFormedLimit().list().ofMaxSize(1))
			.as((free, paid) -> flatten(List.of(indexedLimits("tiers.free", free),
					paid.isEmpty() ? List.of(new Entry(".tiers.paid", "")) : indexedLimits("tiers.paid", paid))));
		return Combinators
			.combine(optional(0.8, key.map((value) -> new Entry(".key", value))),
					optional(0.1, Arbitraries.just(new Entry(".shadow", "true"))),
					Arbitraries.frequencyOf(Tuple.of(4, limits), Tuple.of(1, tiers)))
			.as((keyEntry, shadow, limitEntries) -> flatten(List.of(keyEntry, shadow, limitEntries)).stream()
				.map((entry) -> entry.withPrefix(prefix))
				.toList());
	}

	/** A filter's own properties, relative to the filter ("patterns", "policies"...). */
	private static Arbitrary<List<Entry>> wellFormedFilter(List<String> defined) {
		Arbitrary<List<Entry>> patterns = Arbitraries.of("/api/**", "/api/geocode", "/api/{id}", "/x/*", "/a/{*rest}")
			.list()
			.uniqueElements()
			.ofMinSize(1)
			.ofMaxSize(2)
			.flatMap((list) -> listForms("patterns", list));
		Arbitrary<List<Entry>> methods = optionalEntries(0.3,
				Arbitraries.of("GET", "POST", "put")
					.list()
					.uniqueElements()
					.ofMinSize(1)
					.ofMaxSize(2)
					.flatMap((list) -> listForms("methods", list)));
		Arbitrary<List<Entry>> policies = Arbitraries.of(defined)
			.list()
			.uniqueElements()
			.ofMinSize(1)
			.ofMaxSize(defined.size())
			.flatMap((list) -> listForms("policies", list));
		Arbitrary<List<Entry>> cost = optional(0.3,
				Arbitraries.of("1", "0", "3", "#{1}", "#{#request.getParameter('n')}")
					.map((value) -> new Entry("cost", value)));
		return Combinators.combine(patterns, methods, policies, cost)
			.as((patternEntries, methodEntries, policyEntries,
					costEntry) -> flatten(List.of(patternEntries, methodEntries, policyEntries, costEntry)));
	}

	private static List<Entry> filters(List<List<Entry>> filters) {
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < filters.size(); i++) {
			String prefix = "ratelimit.filters[" + i + "].";
			filters.get(i).forEach((entry) -> entries.add(entry.withPrefix(prefix)));
		}
		return entries;
	}

	private static Arbitrary<List<Entry>> general() {
		return Combinators
			.combine(
					optional(0.05,
							Arbitraries.of("true", "false", "TRUE", "yes", "", "0")
								.map((value) -> new Entry("ratelimit.enabled", value))),
					optional(0.15,
							Arbitraries
								.frequencyOf(Tuple.of(6, Arbitraries.of("memory", "redis")),
										Tuple.of(2,
												Arbitraries.of("MEMORY", "Redis", " memory", "mem", "", "memcached",
														"mémoire")))
								.map((value) -> new Entry("ratelimit.backend", value))),
					optional(0.15,
							Arbitraries
								.frequencyOf(Tuple.of(6, Arbitraries.of("allow", "deny", "local")),
										Tuple.of(2,
												Arbitraries.of("ALLOW", "Local", "reject", "", "deny ", "allow,deny")))
								.map((value) -> new Entry("ratelimit.on-backend-failure", value))),
					optional(0.2,
							Arbitraries.frequencyOf(Tuple.of(6, tierName()), Tuple.of(1, text()))
								.map((value) -> new Entry("ratelimit.default-tier", value))),
					optional(0.1,
							Arbitraries
								.of("1", "0", "-1", "100", "1000000", "9223372036854775807", "9223372036854775808",
										"abc", "")
								.map((value) -> new Entry("ratelimit.memory.max-keys", value))),
					optional(0.1,
							Arbitraries
								.of("memory.max-keys", "headers.enabled", "headers.legacy", "redis.timeout",
										"redis.reservoir", "redis.key-prefix", "redis.startup-timeout")
								.flatMap((name) -> Arbitraries
									.of("true", "false", "maybe", "0", "-1", "100ms", "-1s", "PT1S", "", "rl", "{rl}",
											"20", "9223372036854775807", "\u00e9")
									.map((value) -> new Entry("ratelimit." + name, value)))))
			.as((enabled, backend, failure, tier, maxKeys,
					other) -> flatten(List.of(enabled, backend, failure, tier, maxKeys, other)));
	}

	private static Arbitrary<List<Entry>> client() {
		Arbitrary<String> proxy = Arbitraries.frequencyOf(
				Tuple.of(6,
						Arbitraries.of("10.0.0.0/8", "fd00::/8", "192.168.1.1", "::1", "127.0.0.1/32", "0.0.0.0/0",
								"::/0", "2001:db8::/32")),
				Tuple.of(4, Arbitraries.of("10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/08", "10.0.0.0/0008",
						"fd00::/129", "proxy.example.com", "localhost", ".1:2", ":", "fe80::1%eth0", "fe80::1%eth0/64",
						"[::1]", "[::1]/128", "0x7f.1", "1.2.3", "256.1.1.1", "::ffff:1.2.3.4/120", " 10.0.0.0/8 ", "",
						"*", "10.0.0.0/8/8", "1.2.3.4:80", "\u0661.\u0662.\u0663.\u0664", "10.0.0.0\u00008")),
				Tuple.of(1, text()));
		return Combinators
			.combine(
					optionalEntries(0.3, proxy.list()
						.ofMinSize(1)
						.ofMaxSize(3)
						.flatMap((proxies) -> Arbitraries
							.of(List.of(new Entry("ratelimit.client.trusted-proxies", String.join(",", proxies))),
									indexed("ratelimit.client.trusted-proxies", proxies)))),
					optional(0.15,
							Arbitraries
								.frequencyOf(Tuple.of(5, Arbitraries.of("x-forwarded-for", "forwarded")),
										Tuple.of(2,
												Arbitraries.of("X_FORWARDED_FOR", "X-Forwarded-For", "FORWARDED",
														"x-real-ip", "", "forwarded-for")))
								.map((value) -> new Entry("ratelimit.client.forwarded-header", value))),
					optional(0.15,
							Arbitraries.of("0", "1", "48", "64", "128", "129", "-1", "2147483647", "2147483648", "abc",
									"", " 64")
								.map((value) -> new Entry("ratelimit.client.ipv6-prefix-length", value))),
					optional(0.1,
							Arbitraries
								.frequencyOf(Tuple.of(3, Arbitraries.of("X-API-Key", "Authorization-Key")),
										Tuple.of(2,
												Arbitraries.of("", "  ", "X API Key", "X-Key\r\nInjected: 1",
														"\u00c4")),
										Tuple.of(1, text()))
								.map((value) -> new Entry("ratelimit.client.api-key-header", value))),
					// a property of a later version of the starter; unknown today, and so
					// ignored
					optional(0.05,
							Arbitraries.of("s3cret", "", "\u0000")
								.map((value) -> new Entry("ratelimit.client.api-key-secret", value))))
			.as((proxies, header, prefix, apiKeyHeader,
					secret) -> flatten(List.of(proxies, header, prefix, apiKeyHeader, secret)));
	}

	private static Arbitrary<List<Entry>> policy() {
		Arbitrary<List<Entry>> limits = limit().list().ofMaxSize(3).map((list) -> indexedLimits("limits", list));
		Arbitrary<List<Entry>> tiers = Combinators.combine(tierName(), limit().list().ofMaxSize(2))
			.as((tier, list) -> list.isEmpty() ? List.of(new Entry(".tiers." + tier, ""))
					: indexedLimits("tiers." + tier, list))
			.list()
			.ofMaxSize(2)
			.map(RateLimitConfigurations::flatten);
		Arbitrary<List<Entry>> body = Combinators
			.combine(optional(0.75, keyStrategy().map((key) -> new Entry(".key", key))),
					optional(0.1, Arbitraries.of("true", "false", "yes").map((value) -> new Entry(".shadow", value))),
					Arbitraries.frequencyOf(Tuple.of(4, limits), Tuple.of(1, Arbitraries.just(List.<Entry>of()))),
					Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(List.<Entry>of())), Tuple.of(1, tiers)))
			.as((key, shadow, policyLimits, policyTiers) -> flatten(List.of(key, shadow, policyLimits, policyTiers)));
		return Combinators.combine(policyName(), Arbitraries.frequency(Tuple.of(4, false), Tuple.of(1, true)), body)
			.as((name, bracket, entries) -> {
				String prefix = bracket ? POLICIES + "[" + name + "]" : POLICIES + "." + name;
				List<Entry> prefixed = entries.stream().map((entry) -> entry.withPrefix(prefix)).toList();
				// a policy with nothing set has no property at all; name it with an empty
				// key strategy then
				return prefixed.isEmpty() ? List.of(new Entry(prefix + ".shadow", "false")) : prefixed;
			});
	}

	private static List<Entry> indexedLimits(String list, List<List<Entry>> limits) {
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < limits.size(); i++) {
			String prefix = "." + list + "[" + i + "]";
			List<Entry> limit = limits.get(i);
			if (limit.isEmpty()) {
				entries.add(new Entry(prefix, ""));
			}
			limit.forEach((entry) -> entries.add(entry.withPrefix(prefix)));
		}
		return entries;
	}

	/** A limit's own properties, relative to the limit (".rate", ".capacity"...). */
	private static Arbitrary<List<Entry>> limit() {
		return Arbitraries.frequencyOf(Tuple.of(3, wellFormedLimit()), Tuple.of(2, anyLimit()));
	}

	private static Arbitrary<List<Entry>> wellFormedLimit() {
		Arbitrary<String> count = Arbitraries.longs().between(1, 1000).map(Object::toString);
		Arbitrary<String> rate = Combinators
			.combine(count, Arbitraries.of("1s", "1m", "m", "10s", "500ms", "1h", "1d", "PT1M", "2s"))
			.as((permits, period) -> permits + "/" + period);
		Arbitrary<List<Entry>> tokenBucket = Combinators
			.combine(rate, optional(0.4, count.map((value) -> new Entry(".capacity", value))),
					optional(0.2, Arbitraries.of("0", "1").map((value) -> new Entry(".initial", value))))
			.as((r, capacity, initial) -> flatten(List
				.of(List.of(new Entry(".algorithm", "token-bucket"), new Entry(".rate", r)), capacity, initial)));
		Arbitrary<List<Entry>> leakyBucket = Combinators
			.combine(rate, optional(0.4, count.map((value) -> new Entry(".capacity", value))),
					Arbitraries.of("police", "shape", "shape-wait"))
			.as((r, capacity, mode) -> {
				List<Entry> entries = new ArrayList<>(
						List.of(new Entry(".algorithm", "leaky-bucket"), new Entry(".rate", r)));
				entries.addAll(capacity);
				if (mode.equals("shape-wait")) {
					entries.add(new Entry(".mode", "shape"));
					entries.add(new Entry(".max-wait", "500ms"));
				}
				else {
					entries.add(new Entry(".mode", mode));
				}
				return entries;
			});
		Arbitrary<List<Entry>> window = Combinators
			.combine(Arbitraries.of("fixed-window", "sliding-window-log", "sliding-window-counter"), rate)
			.as((algorithm, r) -> List.of(new Entry(".algorithm", algorithm), new Entry(".rate", r)));
		Arbitrary<List<Entry>> concurrency = Combinators
			.combine(count,
					optional(0.3, Arbitraries.of("30s", "1m", "PT5M").map((value) -> new Entry(".lease-time", value))))
			.as((max, lease) -> flatten(
					List.of(List.of(new Entry(".algorithm", "concurrency"), new Entry(".max", max)), lease)));
		Arbitrary<List<Entry>> bare = rate.map((r) -> List.of(new Entry(".rate", r)));
		return Arbitraries.oneOf(tokenBucket, leakyBucket, window, concurrency, bare);
	}

	private static Arbitrary<List<Entry>> anyLimit() {
		return Combinators
			.combine(optional(0.7, algorithm().map((value) -> new Entry(".algorithm", value))),
					optional(0.85, rate().map((value) -> new Entry(".rate", value))),
					optional(0.25, number().map((value) -> new Entry(".capacity", value))),
					optional(0.15, number().map((value) -> new Entry(".initial", value))),
					optional(0.15, mode().map((value) -> new Entry(".mode", value))),
					optional(0.1, duration().map((value) -> new Entry(".max-wait", value))),
					optional(0.15, number().map((value) -> new Entry(".max", value))),
					optional(0.1, duration().map((value) -> new Entry(".lease-time", value))))
			.as((algorithm, rate, capacity, initial, mode, maxWait, max,
					leaseTime) -> flatten(List.of(algorithm, rate, capacity, initial, mode, maxWait, max, leaseTime)))
			.flatMap((entries) -> Arbitraries.frequencyOf(Tuple.of(5, Arbitraries.just(entries)),
					// relaxed binding: the same properties in camel case
					Tuple.of(1,
							Arbitraries.just(entries.stream()
								.map((entry) -> new Entry(
										entry.name().replace("max-wait", "maxWait").replace("lease-time", "leaseTime"),
										entry.value()))
								.toList()))));
	}

	private static Arbitrary<List<Entry>> filter() {
		Arbitrary<List<String>> patterns = pattern().list().ofMinSize(1).ofMaxSize(3);
		Arbitrary<List<String>> methods = method().list().ofMaxSize(2);
		Arbitrary<List<String>> policies = Arbitraries
			.frequencyOf(Tuple.of(8, policyName()), Tuple.of(1, Arbitraries.of("nope", "", " api", "API")))
			.list()
			.ofMaxSize(3);
		return Combinators
			.combine(optionalEntries(0.95, patterns.flatMap((list) -> listForms("patterns", list))),
					optionalEntries(0.3, methods.flatMap((list) -> listForms("methods", list))),
					optionalEntries(0.95, policies.flatMap((list) -> listForms("policies", list))),
					optional(0.35, cost().map((value) -> new Entry("cost", value))))
			.as((filterPatterns, filterMethods, filterPolicies,
					cost) -> flatten(List.of(filterPatterns, filterMethods, filterPolicies, cost)));
	}

	/** A list property written as one comma-separated value or element by element. */
	private static Arbitrary<List<Entry>> listForms(String name, List<String> values) {
		if (values.isEmpty()) {
			return Arbitraries.just(List.of(new Entry(name, "")));
		}
		return Arbitraries.of(List.of(new Entry(name, String.join(",", values))), indexed(name, values));
	}

	private static List<Entry> indexed(String name, List<String> values) {
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < values.size(); i++) {
			entries.add(new Entry(name + "[" + i + "]", values.get(i)));
		}
		return entries;
	}

	/** Values where Boot expects a structure, and lists with gaps. */
	private static Arbitrary<Entry> oddity() {
		return Arbitraries.of(new Entry("ratelimit.policies.api", ""), new Entry("ratelimit.policies.api", "x"),
				new Entry("ratelimit.policies.api.limits", "5/1s"), new Entry("ratelimit.policies.api.limits[0]", ""),
				new Entry("ratelimit.policies.api.limits[0]", "5/1s"), new Entry("ratelimit.policies.api.tiers", "x"),
				new Entry("ratelimit.policies.api.tiers.free", ""),
				new Entry("ratelimit.policies.api.tiers.free[0]", ""),
				new Entry("ratelimit.policies.api.limits[1].rate", "1/1s"),
				new Entry("ratelimit.policies.api.limits[0].rate", ""), new Entry("ratelimit.policies.api.key", ""),
				new Entry("ratelimit.filters[0]", ""), new Entry("ratelimit.filters", "/api/**"),
				new Entry("ratelimit.filters[1].patterns", "/x"), new Entry("ratelimit.filters[0].patterns[0]", ""),
				new Entry("ratelimit.filters[0].policies[0]", ""), new Entry("ratelimit.filters[0].methods[0]", ""),
				new Entry("ratelimit.filters[0].cost", ""), new Entry("ratelimit.client", ""),
				new Entry("ratelimit.client.trusted-proxies[1]", "10.0.0.1"), new Entry("ratelimit.policies", "x"),
				new Entry("ratelimit", "x"), new Entry("ratelimit.policies..key", "ip"),
				new Entry("ratelimit.policies[].limits[0].rate", "1/1s"),
				new Entry("ratelimit.policies.api.limits[0].algorithm", ""),
				new Entry("ratelimit.policies.api.limits[-1].rate", "1/1s"),
				new Entry("ratelimit.policies.api.limits[x].rate", "1/1s"),
				new Entry("ratelimit.policies.api.limits[99999999999].rate", "1/1s"),
				new Entry("ratelimit.policies.api.limits[0].max-wait", ""),
				new Entry("ratelimit.policies.api.limits[0].capacity", ""),
				new Entry("ratelimit.policys.api.key", "ip"),
				new Entry("ratelimit.policies.api.limits[0].capacty", "5"));
	}

	private static Arbitrary<String> policyName() {
		return Arbitraries.frequencyOf(Tuple.of(30, Arbitraries.just("api")), Tuple.of(20, Arbitraries.just("burst")),
				Tuple.of(8, Arbitraries.just("per-ip")),
				Tuple.of(10,
						Arbitraries.of("API", "Api ", "per_ip", "\u00e4", "\u540d\u524d", "a.b", "with space", "x:y",
								"x=y", "", "\u202Eevil", "x\u0000y", "p".repeat(300), "[x]", "x]", "0", "a/b")),
				Tuple.of(2, text()));
	}

	private static Arbitrary<String> tierName() {
		return Arbitraries.frequencyOf(Tuple.of(30, Arbitraries.just("free")), Tuple.of(20, Arbitraries.just("paid")),
				Tuple.of(10, Arbitraries.just("anonymous")), Tuple.of(8, Arbitraries.of("FREE", "Free ", "gold", "",
						"\u0442\u0430\u0440\u0438\u0444", "x.y", "tier_paid", " ")),
				Tuple.of(1, text()));
	}

	private static Arbitrary<String> keyStrategy() {
		return Arbitraries.frequencyOf(
				Tuple.of(12,
						Arbitraries.of("principal", "api-key", "ip", "global", "header:X-Client", "bean:tenantKeys")),
				Tuple.of(6, Arbitraries.of("IP", " ip ", "Api-Key", "api_key", "header:", "header: ", "header:X Client",
						"header:\u00e4", "header:X-Client\r\nX: y", "bean:missing", "bean:", "bean:notAResolver",
						"bean:tenantKeys ", "cookie", "", "\u00efp", "ip\u0000", "principal,ip")),
				Tuple.of(6, Arbitraries.of("#{#request.getHeader('X-Tenant')}",
						"#{#request.getHeader('X-Tenant')?.toLowerCase()}", "#{#principal?.name}", "#{#userId}",
						"#{#request.getHeader(}", "#{", "#{}", "#{ }", "#{1+}", "#{'a'}", "#{#args[0]}",
						"#{@tenantKeys}", "#{#request.remoteAddr}", "#{'}", "#{#{1}}", "#{T(java.lang.Long).MAX_VALUE}",
						"#{#request.getHeader('X')} trailing", " #{'a'} ", "#{" + "(".repeat(200) + "}",
						"#{" + "1+".repeat(2000) + "1}", "#{" + "[".repeat(3000) + "}")),
				Tuple.of(1, text()));
	}

	private static Arbitrary<String> algorithm() {
		return Arbitraries.frequencyOf(
				Tuple.of(10,
						Arbitraries.of("token-bucket", "leaky-bucket", "fixed-window", "sliding-window-log",
								"sliding-window-counter", "concurrency")),
				Tuple.of(5,
						Arbitraries.of("TOKEN-BUCKET", "Token_Bucket", "token_bucket", " leaky-bucket ", "tokenbucket",
								"token-bukket", "leaky", "sliding-window", "", "concurrency\n", "t\u043eken-bucket",
								"token-bucket\u0000", "fixed-window,leaky-bucket", "\u0130p")),
				Tuple.of(1, text()));
	}

	private static Arbitrary<String> rate() {
		return Arbitraries.frequencyOf(
				Tuple.of(8,
						Arbitraries.of("5/1s", "60/1m", "60/m", "1/10s", "100/500ms", "10/1h", "1/1d", "5/PT1S",
								"3/2s")),
				Tuple.of(10,
						Arbitraries.of("0/1s", "5/0s", "-1/1m", "+5/1s", "1/1us", "1/1ns", "1/999ns",
								"9007199254740992/1s", "9007199254740993/1s", "99999999999999999999/1s", "5/pt1s",
								"5/P1D", "5/PT0.0000001S", "5/P-1D", "5/PT-1S", "5/1w", "5/1mo", "5/1y", "5/ 1 s",
								"5 / 1s", "5//1s", "5/1s/1s", "/1s", "5/", "five per second", "", " ", "5/1S", "5/1M",
								"5/1Ms", "\u0665/1s", "5/1s\u0000", "1/9007199254740992us", "1/9007199254740993us",
								"1/106751991167300d", "1/106751991167301d", "9007199254740992/9007199254740992us",
								"1/P106751991167300D", "1/P999999999999999999D", "1/99999999999999999999s",
								"1/9223372036854775807ms", "1/9223372036854775807s", "1/9223372036854775807us", "5/s",
								"5/1", "5/1.5s", "1e3/1s", "5/PT1S ", "5/0.5s", "9007199254740992/1us", "1/1us\n")),
				Tuple.of(3,
						Combinators
							.combine(Arbitraries.longs(), Arbitraries.longs().between(-2, Long.MAX_VALUE),
									Arbitraries.of("ns", "us", "ms", "s", "m", "h", "d", ""))
							.as((permits, amount, unit) -> permits + "/" + amount + unit)),
				Tuple.of(1, text()));
	}

	private static Arbitrary<String> number() {
		return Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.of("1", "5", "10", "100", "0", "-1")),
				Tuple.of(4,
						Arbitraries.of("9007199254740992", "9007199254740993", "9223372036854775807",
								"9223372036854775808", "-9223372036854775808", "abc", "1.5", "", " 3 ", "0x10", "1e3",
								"\u0661", "2147483648", "4611686018427387904")),
				Tuple.of(2, Arbitraries.longs().map(Object::toString)));
	}

	private static Arbitrary<String> mode() {
		return Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.of("police", "shape")),
				Tuple.of(2, Arbitraries.of("SHAPE", " shape", "queue", "", "Police\t", "shap\u0065\u0301")));
	}

	private static Arbitrary<String> duration() {
		return Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.of("500ms", "1s", "30s", "PT1S", "1m")),
				Tuple.of(4,
						Arbitraries.of("0", "0s", "-1s", "PT-1S", "1d", "106751991167300d", "106751991167301d",
								"9999999999999999999s", "abc", "", "1us", "1ns", "P1D", "5", "PT0.5S", "1h30m",
								"P292278994Y", "9223372036854775807ms", "-9223372036854775808ns")),
				Tuple.of(1, Arbitraries.longs().map((value) -> value + "ms")));
	}

	private static Arbitrary<String> pattern() {
		return Arbitraries.frequencyOf(
				Tuple.of(8, Arbitraries.of("/api/**", "/api/geocode", "/api/{id}", "/**", "/x/*", "/a/{*rest}")),
				Tuple.of(4,
						Arbitraries.of("/api/{id", "/api/**/x", "**", "", "/", "api", "/a/{*rest}/b", "/\u00e4/**",
								"/a b", "/{x}/{x}", "/api/*.json", "{", "/\u0000", "/" + "a/".repeat(500), "/{a}{b}",
								"/{id:[0-9]+}", "/{id:[}", "/a{id:[}", "/x{id:*}", "/api/**/", "//", "/x\r\n")),
				Tuple.of(1, text()));
	}

	private static Arbitrary<String> method() {
		return Arbitraries.frequencyOf(Tuple.of(5, Arbitraries.of("GET", "POST", "HEAD", "PUT", "DELETE")),
				Tuple.of(3, Arbitraries.of("get", " put ", "FETCH", "", "\uff27\uff25\uff34", "G\u0000ET", "CONNECT")));
	}

	private static Arbitrary<String> cost() {
		return Arbitraries
			.frequencyOf(Tuple.of(4, Arbitraries.of("1", "0", "5", "#{1}", "#{2}")),
					Tuple.of(4, Arbitraries.of("-1", "9223372036854775807", "9223372036854775808", "lots", "1.5", "",
							" 2 ", "#{#request.getParameter('n')}", "#{#n}", "#{#args[0]}", "#{", "#{}", "#{-1}",
							"#{T(java.lang.Long).parseLong(#request.getHeader('X-Cost'))}", "#{#request.getHeader(}",
							"#{'a'}", "#{null}", "#{#principal}", "\u0662", "#{1} #{2}")),
					Tuple.of(1, text()));
	}

	/** Short text of any characters: unicode, surrogates, controls. */
	private static Arbitrary<String> text() {
		return Arbitraries.strings().all().ofMaxLength(12);
	}

	/**
	 * Unicode and control characters inserted into a name or a value.
	 *
	 * @param index which property (modulo their number)
	 * @param position where in the text (modulo its length)
	 * @param inName whether the name or the value
	 * @param inserted what is inserted
	 */
	private record Mutation(int index, int position, boolean inName, String inserted) {

	}

	private static Arbitrary<Mutation> mutation() {
		Arbitrary<String> inserted = Arbitraries.frequencyOf(
				Tuple.of(3,
						Arbitraries.of("\u0000", "\r\n", "\t", "\u202E", "\u200B", "\uFEFF", "\u0301", "\uD800",
								"\uDC00", "\uD83D\uDE00", "\u00A0", "\uFF11", "\u007F", "\\", "'", "\"", ",", "=", ":",
								"[", "]", ".", "${x}", "${ratelimit.backend}", "#{")),
				Tuple.of(1, Arbitraries.strings().all().ofMinLength(1).ofMaxLength(4)));
		return Combinators
			.combine(Arbitraries.integers().between(0, 1000), Arbitraries.integers().between(0, 1000),
					Arbitraries.frequency(Tuple.of(3, false), Tuple.of(1, true)), inserted)
			.as(Mutation::new);
	}

	private static List<Entry> mutate(List<Entry> entries, List<Mutation> mutations) {
		if (entries.isEmpty()) {
			return entries;
		}
		List<Entry> mutated = new ArrayList<>(entries);
		for (Mutation mutation : mutations) {
			int index = mutation.index() % mutated.size();
			Entry entry = mutated.get(index);
			if (mutation.inName()) {
				// never before "ratelimit.": the property must stay ours to be checked
				String name = entry.name();
				int kept = Math.min("ratelimit.".length(), name.length());
				int position = kept + mutation.position() % (name.length() - kept + 1);
				mutated.set(index, new Entry(insert(name, position, mutation.inserted()), entry.value()));
			}
			else {
				String value = entry.value();
				mutated.set(index, new Entry(entry.name(),
						insert(value, mutation.position() % (value.length() + 1), mutation.inserted())));
			}
		}
		return mutated;
	}

	private static String insert(String text, int position, String inserted) {
		return text.substring(0, position) + inserted + text.substring(position);
	}

	private static <T> Arbitrary<List<T>> optional(double probability, Arbitrary<T> value) {
		int present = (int) Math.round(probability * 100);
		return Arbitraries.frequencyOf(Tuple.of(100 - present, Arbitraries.just(List.<T>of())),
				Tuple.of(present, value.map(List::of)));
	}

	private static Arbitrary<List<Entry>> optionalEntries(double probability, Arbitrary<List<Entry>> entries) {
		int present = (int) Math.round(probability * 100);
		return Arbitraries.frequencyOf(Tuple.of(100 - present, Arbitraries.just(List.<Entry>of())),
				Tuple.of(present, entries));
	}

	private static <T> List<T> flatten(List<? extends List<? extends T>> lists) {
		List<T> all = new ArrayList<>();
		lists.forEach(all::addAll);
		return all;
	}

	/** Java-escapes what a terminal would not show. */
	static String escape(String text) {
		StringBuilder escaped = new StringBuilder();
		int shown = Math.min(text.length(), 400);
		for (int i = 0; i < shown; i++) {
			char c = text.charAt(i);
			if (c >= 0x20 && c < 0x7F) {
				escaped.append(c);
			}
			else {
				escaped.append(String.format("\\u%04X", (int) c));
			}
		}
		if (text.length() > shown) {
			escaped.append("... (").append(text.length()).append(" chars)");
		}
		return escaped.toString();
	}

}
