package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.internal.algorithm.CalendarWindow;

/**
 * Builds the {@code ARGV} of a call of the decision script, as the header of its
 * {@code lua/prelude.lua} lists them: the operation, cost, time, TTL floor and reservoir
 * size, then {@value #PER_KEY} values per key: its limit's eleven, what it reads to take
 * a spent share over, and its extra value.
 */
final class ScriptArguments {

	/** Values per key, the script's {@code ARGS_PER_KEY}. */
	static final int PER_KEY = 13;

	/** Values before the first key's, the script's {@code FIRST_KEY_ARG - 1}. */
	private static final int HEADER = 5;

	private final String ttlFloorMillis;

	private final TimeSource clock;

	/**
	 * Creates the builder of one limiter's arguments.
	 * @param ttlFloorMillis the least time to live of a key, in milliseconds; 0 in
	 * production
	 */
	ScriptArguments(long ttlFloorMillis) {
		this(ttlFloorMillis, TimeSource.system());
	}

	/**
	 * Creates the builder of one limiter's arguments.
	 * @param ttlFloorMillis the least time to live of a key, in milliseconds; 0 in
	 * production
	 * @param clock the application's clock, around whose time a calendar window's
	 * boundaries are sent when the script reads Redis {@code TIME}
	 */
	ScriptArguments(long ttlFloorMillis, TimeSource clock) {
		this.ttlFloorMillis = Long.toString(ttlFloorMillis);
		this.clock = clock;
	}

	/**
	 * Returns the arguments of one script call on a group of a plan's keys.
	 * @param op the operation
	 * @param plan the plan
	 * @param group the indexes of the plan's keys this call decides
	 * @param extra per key of the group: a lease id or member, a refund's mark, or empty;
	 * the call's keys are {@link SlotPlan#keys(int[])}'s
	 * @param cost the cost
	 * @param want the reservoir size ({@link ScriptOperation#FILL_RESERVOIR}), else 0
	 * @param time the time in microseconds, or empty for the script to read Redis
	 * {@code TIME}
	 * @return the arguments
	 */
	List<byte[]> of(ScriptOperation op, SlotPlan plan, int[] group, String[] extra, long cost, long want, String time) {
		List<byte[]> args = new ArrayList<>(HEADER + group.length * PER_KEY);
		args.add(bytes(op.code()));
		args.add(bytes(Long.toString(cost)));
		args.add(bytes(time));
		args.add(bytes(this.ttlFloorMillis));
		args.add(bytes(Long.toString(want)));
		int[] penaltyKeys = plan.penaltyKeyPlaces(group);
		SlotPlan.Carry[] carries = takesSharesOver(op) ? plan.carries(group) : new SlotPlan.Carry[group.length];
		for (int i = 0; i < group.length; i++) {
			for (String value : limitValues(plan.target(group[i]).limit(), time, penaltyKeys[i])) {
				args.add(bytes(value));
			}
			args.add(bytes((carries[i] != null) ? carry(carries[i], time) : ""));
			args.add(bytes(extra[i]));
		}
		return args;
	}

	/**
	 * Whether the script takes spent shares over in an operation: where it loads state.
	 */
	private static boolean takesSharesOver(ScriptOperation op) {
		return op == ScriptOperation.ACQUIRE || op == ScriptOperation.SEE || op == ScriptOperation.EVALUATE
				|| op == ScriptOperation.FILL_RESERVOIR;
	}

	/**
	 * Returns the first eleven values of a key, those of its limit: algorithm code,
	 * unitsPerMicro, unitsPerPermit, capacity, initial, shape, max-wait, window,
	 * retention, penalty and the place of its penalty key (0: none).
	 */
	private String[] limitValues(Limit limit, String time, int penaltyKey) {
		return new String[] { code(limit.algorithm()), Long.toString(limit.unitsPerMicro()),
				Long.toString(limit.unitsPerPermit()), Long.toString(limit.capacity()), Long.toString(limit.initial()),
				(limit.mode() == LeakMode.SHAPE) ? "1" : "0", Long.toString(limit.maxWaitMicros()), window(limit, time),
				Long.toString(limit.retentionMicros()), Long.toString(limit.penaltyMicros()),
				Integer.toString(penaltyKey) };
	}

	/**
	 * Returns what the script reads for a key to take a share over
	 * ({@code CarriedShares.read} in {@code carried_shares.lua}): the place of the key
	 * holding until when the shares it took over count, then for each counterpart
	 * {@code ;}, its key's place and its limit's eleven values, separated by spaces (none
	 * holds a space or a {@code ;}).
	 */
	private String carry(SlotPlan.Carry carry, String time) {
		StringBuilder text = new StringBuilder().append(carry.carriedPlace());
		for (int k = 0; k < carry.places().length; k++) {
			text.append(';').append(carry.places()[k]);
			for (String value : limitValues(carry.limits().get(k), time, 0)) {
				text.append(' ').append(value);
			}
		}
		return text.toString();
	}

	/**
	 * Returns a limit's window: its length, or for a calendar window its zone, then
	 * {@code |}, then the starts of the windows around the time the script will decide at
	 * (the application's estimate when the script reads Redis {@code TIME}), from which
	 * the script picks by its time. The zone tells a state written under another zone
	 * apart.
	 */
	private String window(Limit limit, String time) {
		if (!CalendarWindow.isCalendar(limit)) {
			return Long.toString(limit.windowMicros());
		}
		long at = time.isEmpty() ? this.clock.nowMicros() : Long.parseLong(time);
		long[] bounds = CalendarWindow.around(limit, at);
		StringBuilder text = new StringBuilder(limit.zone().getId()).append('|');
		for (int i = 0; i < bounds.length; i++) {
			text.append((i == 0) ? "" : ",").append(bounds[i]);
		}
		return text.toString();
	}

	/**
	 * Returns the code the script knows an algorithm by.
	 * @param algorithm the algorithm
	 * @return the code
	 */
	static String code(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET -> "tb";
			case LEAKY_BUCKET -> "lb";
			case FIXED_WINDOW -> "fw";
			case SLIDING_WINDOW_LOG -> "swl";
			case SLIDING_WINDOW_COUNTER -> "swc";
			case CONCURRENCY -> "cc";
		};
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
