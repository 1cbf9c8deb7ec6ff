package dev.ratelimit.spring.web;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.servlet.http.HttpServletResponse;

import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.spring.RateLimitResult;

/**
 * Writes the rate-limit headers of a limited response, per draft-ietf-httpapi-ratelimit-headers-10:
 * {@code RateLimit-Policy} with one item per limit that applied ({@code "geocode-burst";q=10;w=2}: quota and the
 * seconds the limit takes to refill from empty), {@code RateLimit} for the limit closest to rejection
 * ({@code "geocode-burst";r=7;t=1}: permits remaining and seconds until full), and optionally the legacy
 * {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset} for that same limit.
 *
 * <p>
 * An item is named after its policy; a policy with several limits names them {@code policy[0]}, {@code policy[1]},
 * after their index in the policy's configured list. Seconds are rounded up.
 */
public class RateLimitHeaders {

	/** The header listing the quota policies. */
	public static final String RATE_LIMIT_POLICY = "RateLimit-Policy";

	/** The header describing the limit closest to rejection. */
	public static final String RATE_LIMIT = "RateLimit";

	/** The legacy quota header. */
	public static final String X_RATE_LIMIT_LIMIT = "X-RateLimit-Limit";

	/** The legacy remaining header. */
	public static final String X_RATE_LIMIT_REMAINING = "X-RateLimit-Remaining";

	/** The legacy reset header, in seconds until full. */
	public static final String X_RATE_LIMIT_RESET = "X-RateLimit-Reset";

	private final boolean enabled;

	private final boolean legacy;

	/**
	 * Creates a header writer.
	 * @param enabled whether to write the IETF headers
	 * @param legacy whether to write the legacy headers
	 */
	public RateLimitHeaders(boolean enabled, boolean legacy) {
		this.enabled = enabled;
		this.legacy = legacy;
	}

	/**
	 * Writes the headers for a result, unless no limit applied or the response is committed.
	 * @param response the response
	 * @param result the result
	 */
	public void write(HttpServletResponse response, RateLimitResult result) {
		List<LimitStatus> statuses = result.statuses();
		LimitStatus headline = result.headlineStatus();
		if (statuses.isEmpty() || headline == null || response.isCommitted() || !(this.enabled || this.legacy)) {
			return;
		}
		Map<LimitStatus, String> names = itemNames(statuses);
		if (this.enabled) {
			StringBuilder policy = new StringBuilder();
			Set<String> written = new LinkedHashSet<>();
			for (LimitStatus status : statuses) {
				String name = names.get(status);
				if (written.add(name)) {
					if (policy.length() > 0) {
						policy.append(", ");
					}
					policy.append(quote(name))
						.append(";q=")
						.append(status.limit())
						.append(";w=")
						.append(seconds(status.target().limit().windowMicros()));
				}
			}
			response.setHeader(RATE_LIMIT_POLICY, policy.toString());
			response.setHeader(RATE_LIMIT, quote(names.get(headline)) + ";r=" + headline.remaining() + ";t="
					+ seconds(headline.resetAfterMicros()));
		}
		if (this.legacy) {
			response.setHeader(X_RATE_LIMIT_LIMIT, Long.toString(headline.limit()));
			response.setHeader(X_RATE_LIMIT_REMAINING, Long.toString(headline.remaining()));
			response.setHeader(X_RATE_LIMIT_RESET, Long.toString(seconds(headline.resetAfterMicros())));
		}
	}

	private static Map<LimitStatus, String> itemNames(List<LimitStatus> statuses) {
		Map<String, Integer> limitsPerPolicy = new HashMap<>();
		for (LimitStatus status : statuses) {
			limitsPerPolicy.merge(status.target().policy() + "\u0000" + status.target().key(), 1, Integer::sum);
		}
		Map<String, Integer> seen = new HashMap<>();
		Map<LimitStatus, String> names = new IdentityHashMap<>();
		for (LimitStatus status : statuses) {
			String group = status.target().policy() + "\u0000" + status.target().key();
			String policy = status.target().policy();
			if (limitsPerPolicy.get(group) == 1) {
				names.put(status, policy);
			}
			else {
				int index = seen.merge(group, 1, Integer::sum) - 1;
				names.put(status, policy + "[" + index + "]");
			}
		}
		return names;
	}

	/**
	 * Returns a duration in whole seconds, rounded up.
	 * @param micros the duration in microseconds
	 * @return the seconds
	 */
	static long seconds(long micros) {
		return (micros <= 0) ? 0 : (micros + 999_999) / 1_000_000;
	}

	private static String quote(String name) {
		StringBuilder quoted = new StringBuilder(name.length() + 2).append('"');
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (c == '"' || c == '\\') {
				quoted.append('\\');
			}
			if (c >= 0x20 && c < 0x7F) {
				quoted.append(c);
			}
		}
		return quoted.append('"').toString();
	}

}
