package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.LimitStatus;

/**
 * The reply of the decision script to an operation that evaluates
 * ({@link ScriptOperation#ACQUIRE}, {@code SEE}, {@code EVALUATE},
 * {@code FILL_RESERVOIR}): the script's time, whether every key allowed, and each key's
 * outcome in the order the keys were sent.
 *
 * @param now the script's time in microseconds
 * @param allAllowed whether every key allowed the call
 * @param outcomes one per key sent
 */
record ScriptReply(long now, boolean allAllowed, List<KeyOutcome> outcomes) {

	/** Values per key in the script's flat reply, after {@code now} and all-allowed. */
	static final int VALUES_PER_KEY = 8;

	/**
	 * Decodes the script's flat reply: {@code now}, all-allowed (1/0), then
	 * {@value #VALUES_PER_KEY} integers per key.
	 * @param reply the reply as the client returned it
	 * @param keys the number of keys sent
	 * @return the reply
	 * @throws IllegalStateException if the reply has another length or a value that is
	 * not a number
	 */
	static ScriptReply decode(List<Object> reply, int keys) {
		long[] values = new long[reply.size()];
		boolean valid = values.length == 2 + keys * VALUES_PER_KEY;
		for (int i = 0; valid && i < values.length; i++) {
			if (reply.get(i) instanceof Number number) {
				values[i] = number.longValue();
			}
			else {
				valid = false;
			}
		}
		if (!valid) {
			throw new IllegalStateException("Unexpected reply from the rate-limit script: " + reply);
		}
		List<KeyOutcome> outcomes = new ArrayList<>(keys);
		for (int i = 2; i < values.length; i += VALUES_PER_KEY) {
			outcomes.add(new KeyOutcome(values[i] == 1, values[i + 1], values[i + 2], values[i + 3], values[i + 4],
					values[i + 5] == 1, values[i + 6], values[i + 7] == 1));
		}
		return new ScriptReply(values[0], values[1] == 1, List.copyOf(outcomes));
	}

	/**
	 * One key's part of a reply: its limit's decision, and the mark a refund of it needs.
	 *
	 * @param allowed whether the key's limit allowed the call
	 * @param remaining permits left after the call
	 * @param retryAfterMicros when rejected, the wait until the limit would allow the
	 * call
	 * @param resetAfterMicros the wait until the limit is back to full capacity
	 * @param delayMicros the shaping delay the limit imposes
	 * @param exceeds whether the call costs more than the limit can ever grant
	 * @param mark the window start (fixed window, sliding window counter), the log time
	 * (sliding window log), the permits granted ({@link ScriptOperation#FILL_RESERVOIR}),
	 * else 0
	 * @param penalized whether a penalty of the limit's policy and client key rejected
	 * the call
	 */
	record KeyOutcome(boolean allowed, long remaining, long retryAfterMicros, long resetAfterMicros, long delayMicros,
			boolean exceeds, long mark, boolean penalized) {

		/**
		 * Creates the outcome of a key whose policy and client key serve no penalty.
		 * @param allowed whether the key's limit allowed the call
		 * @param remaining permits left after the call
		 * @param retryAfterMicros when rejected, the wait until the limit would allow the
		 * call
		 * @param resetAfterMicros the wait until the limit is back to full capacity
		 * @param delayMicros the shaping delay the limit imposes
		 * @param exceeds whether the call costs more than the limit can ever grant
		 * @param mark what a refund needs, else 0
		 */
		KeyOutcome(boolean allowed, long remaining, long retryAfterMicros, long resetAfterMicros, long delayMicros,
				boolean exceeds, long mark) {
			this(allowed, remaining, retryAfterMicros, resetAfterMicros, delayMicros, exceeds, mark, false);
		}

		/**
		 * Returns this outcome as the status of a keyed limit.
		 * @param target the keyed limit
		 * @return the status
		 */
		LimitStatus status(KeyedLimit target) {
			return new LimitStatus(target, this.allowed, this.remaining, this.retryAfterMicros, this.resetAfterMicros,
					this.delayMicros, this.exceeds, this.penalized);
		}

		/**
		 * Returns this outcome with other permits left.
		 * @param remaining the permits left
		 * @return the outcome
		 */
		KeyOutcome withRemaining(long remaining) {
			return new KeyOutcome(this.allowed, remaining, this.retryAfterMicros, this.resetAfterMicros,
					this.delayMicros, this.exceeds, this.mark, this.penalized);
		}

	}

}
