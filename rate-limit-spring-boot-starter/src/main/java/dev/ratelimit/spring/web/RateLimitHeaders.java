package dev.ratelimit.spring.web;

import java.util.List;
import java.util.function.BiConsumer;

import jakarta.servlet.http.HttpServletResponse;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;
import dev.ratelimit.spring.RateLimitResult;

/**
 * Writes the rate-limit headers of a limited response, per
 * draft-ietf-httpapi-ratelimit-headers-10: {@code RateLimit-Policy}, {@code RateLimit}
 * and optionally the legacy {@code X-RateLimit-*} headers.
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
	 * Writes the headers for a result, unless no limit applied or the response is
	 * committed.
	 * <p>
	 * {@code RateLimit-Policy} has one item per limit that applied
	 * ({@code "geocode-burst";q=10;w=2}: quota and the seconds the limit takes to refill
	 * from empty). {@code RateLimit} describes the limit closest to rejection
	 * ({@code "geocode-burst";r=7;t=1}: permits remaining and seconds until full), as do
	 * {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and
	 * {@code X-RateLimit-Reset}. An item is named after its policy; a policy with several
	 * limits names them {@code policy[0]}, {@code policy[1]}, by their index in its
	 * configured list. Seconds are rounded up.
	 * @param response the response
	 * @param result the result
	 */
	public void write(HttpServletResponse response, RateLimitResult result) {
		if (!response.isCommitted()) {
			write(result, response::setHeader);
		}
	}

	/**
	 * Writes the headers of a call's result through any web stack's response: the same
	 * headers as {@link #write(HttpServletResponse, RateLimitResult)}, each set
	 * (replacing a value of the same name) by {@code setHeader}.
	 * @param result the result
	 * @param setHeader sets a header of the response to a value
	 */
	public void write(RateLimitResult result, BiConsumer<String, String> setHeader) {
		List<LimitStatus> statuses = result.statuses();
		LimitStatus headline = result.headlineStatus();
		if (statuses.isEmpty() || headline == null || !(this.enabled || this.legacy)) {
			return;
		}
		String[] names = itemNames(statuses);
		if (this.enabled) {
			StringBuilder policy = new StringBuilder(32 * names.length);
			String headlineName = null;
			for (int i = 0; i < names.length; i++) {
				LimitStatus status = statuses.get(i);
				if (status == headline) {
					headlineName = names[i];
				}
				if (firstWithName(names, i)) {
					if (policy.length() > 0) {
						policy.append(", ");
					}
					quote(policy, names[i]).append(";q=")
						.append(status.limit())
						.append(";w=")
						.append(seconds(status.target().limit().windowMicros()));
				}
			}
			setHeader.accept(RATE_LIMIT_POLICY, policy.toString());
			StringBuilder current = new StringBuilder(32);
			quote(current, (headlineName != null) ? headlineName : headline.target().policy()).append(";r=")
				.append(headline.remaining())
				.append(";t=")
				.append(seconds(headline.resetAfterMicros()));
			setHeader.accept(RATE_LIMIT, current.toString());
		}
		if (this.legacy) {
			setHeader.accept(X_RATE_LIMIT_LIMIT, Long.toString(headline.limit()));
			setHeader.accept(X_RATE_LIMIT_REMAINING, Long.toString(headline.remaining()));
			setHeader.accept(X_RATE_LIMIT_RESET, Long.toString(seconds(headline.resetAfterMicros())));
		}
	}

	/**
	 * Names each status as its policy, or, where a policy has several limits for the same
	 * key, as the policy with the limit's index among them ({@code api[0]},
	 * {@code api[1]}). The lists are a few entries long: compared pairwise, without maps.
	 */
	private static String[] itemNames(List<LimitStatus> statuses) {
		int size = statuses.size();
		String[] names = new String[size];
		for (int i = 0; i < size; i++) {
			KeyedLimit target = statuses.get(i).target();
			int index = 0;
			boolean shared = false;
			for (int j = 0; j < size; j++) {
				if (j != i && sameGroup(target, statuses.get(j).target())) {
					shared = true;
					if (j < i) {
						index++;
					}
				}
			}
			names[i] = shared ? target.policy() + "[" + index + "]" : target.policy();
		}
		return names;
	}

	private static boolean sameGroup(KeyedLimit a, KeyedLimit b) {
		return a.policy().equals(b.policy()) && a.key().equals(b.key());
	}

	private static boolean firstWithName(String[] names, int i) {
		for (int j = 0; j < i; j++) {
			if (names[j].equals(names[i])) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns a duration in whole seconds, rounded up.
	 * @param micros the duration in microseconds
	 * @return the seconds
	 */
	static long seconds(long micros) {
		return (micros <= 0) ? 0 : (micros + 999_999) / 1_000_000;
	}

	private static StringBuilder quote(StringBuilder out, String name) {
		out.append('"');
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (c == '"' || c == '\\') {
				out.append('\\');
			}
			if (c >= 0x20 && c < 0x7F) {
				out.append(c);
			}
		}
		return out.append('"');
	}

}
