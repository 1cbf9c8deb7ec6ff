package dev.ratelimit.spring.overrides;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.Rate;
import dev.ratelimit.core.WindowAlignment;

/**
 * The text form of an override in a shared store: a first line {@code v1 EXPIRY} (epoch
 * milliseconds, or {@code -}), then one line per limit of {@code name=value} pairs joined
 * by {@code &}, each part URL-encoded. Every value is what the limit holds, not what a
 * user typed, so that decoding builds an equal limit.
 */
final class StoredOverrides {

	private static final String VERSION = "v1";

	private StoredOverrides() {
	}

	static String field(String policy, String client) {
		return encode(policy) + " " + encode(client);
	}

	static String[] policyAndClient(String field) {
		int space = field.indexOf(' ');
		if (space < 0) {
			throw new IllegalArgumentException("Not an override field: " + field);
		}
		return new String[] { decode(field.substring(0, space)), decode(field.substring(space + 1)) };
	}

	static String encode(LimitOverride override) {
		StringBuilder text = new StringBuilder(VERSION).append(' ')
			.append((override.expires() != null) ? Long.toString(override.expires().toEpochMilli()) : "-");
		for (Limit limit : override.limits()) {
			text.append('\n');
			boolean first = true;
			for (Map.Entry<String, String> entry : describe(limit).entrySet()) {
				text.append(first ? "" : "&")
					.append(encode(entry.getKey()))
					.append('=')
					.append(encode(entry.getValue()));
				first = false;
			}
		}
		return text.toString();
	}

	static LimitOverride decode(String policy, String client, String text) {
		String[] lines = text.split("\n", -1);
		String[] head = lines[0].split(" ", -1);
		if (head.length != 2 || !VERSION.equals(head[0])) {
			throw new IllegalArgumentException("Unknown override format '" + lines[0] + "'");
		}
		Instant expires = "-".equals(head[1]) ? null : Instant.ofEpochMilli(Long.parseLong(head[1]));
		List<Limit> limits = new ArrayList<>(lines.length - 1);
		for (int i = 1; i < lines.length; i++) {
			Map<String, String> values = new LinkedHashMap<>();
			for (String pair : lines[i].split("&", -1)) {
				int equals = pair.indexOf('=');
				if (equals < 0) {
					throw new IllegalArgumentException("Malformed limit '" + lines[i] + "'");
				}
				values.put(decode(pair.substring(0, equals)), decode(pair.substring(equals + 1)));
			}
			limits.add(limit(values));
		}
		return new LimitOverride(policy, client, limits, expires);
	}

	private static Map<String, String> describe(Limit limit) {
		Map<String, String> values = new LinkedHashMap<>();
		values.put("algorithm", limit.algorithm().configName());
		Rate rate = limit.rate();
		if (rate != null) {
			// a period in months has no length in microseconds
			values.put("rate",
					(rate.months() > 0) ? rate.toString() : rate.permits() + "/" + rate.periodMicros() + "us");
			values.put("capacity", Long.toString(limit.capacity()));
			values.put("initial", Long.toString(limit.initial()));
		}
		else {
			values.put("max", Long.toString(limit.capacity()));
			values.put("lease-time", Long.toString(limit.leaseTimeMicros()));
		}
		if (limit.algorithm() == Algorithm.LEAKY_BUCKET) {
			values.put("mode", limit.mode().toString());
			if (limit.maxWaitMicros() >= 0) {
				values.put("max-wait", Long.toString(limit.maxWaitMicros()));
			}
		}
		if (limit.alignment() == WindowAlignment.CALENDAR) {
			values.put("align", limit.alignment().toString());
			values.put("zone", limit.zone().getId());
		}
		return values;
	}

	private static Limit limit(Map<String, String> values) {
		Algorithm algorithm = Algorithm.fromConfigName(required(values, "algorithm"));
		Limit.Builder builder = Limit.builder(algorithm);
		if (algorithm == Algorithm.CONCURRENCY) {
			builder.max(Long.parseLong(required(values, "max"))).leaseTime(micros(required(values, "lease-time")));
		}
		else {
			builder.rate(Rate.parse(required(values, "rate")));
			if (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET) {
				builder.capacity(Long.parseLong(required(values, "capacity")));
			}
			if (algorithm == Algorithm.TOKEN_BUCKET) {
				builder.initial(Long.parseLong(required(values, "initial")));
			}
		}
		if (algorithm == Algorithm.LEAKY_BUCKET) {
			builder.mode(LeakMode.fromConfigName(required(values, "mode")));
			String maxWait = values.get("max-wait");
			if (maxWait != null) {
				builder.maxWait(micros(maxWait));
			}
		}
		String align = values.get("align");
		if (align != null) {
			builder.align(WindowAlignment.fromConfigName(align)).zone(required(values, "zone"));
		}
		return builder.build();
	}

	private static Duration micros(String value) {
		return Duration.ofNanos(Math.multiplyExact(Long.parseLong(value), 1000L));
	}

	private static String required(Map<String, String> values, String name) {
		String value = values.get(name);
		if (value == null) {
			throw new IllegalArgumentException("A stored limit lacks '" + name + "': " + values);
		}
		return value;
	}

	private static String encode(String text) {
		return URLEncoder.encode(text, StandardCharsets.UTF_8);
	}

	private static String decode(String text) {
		return URLDecoder.decode(text, StandardCharsets.UTF_8);
	}

}
